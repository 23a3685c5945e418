// A reader on a docs site that embeds the widget, as tests/browser/test_widget.py drives it: asks
// from the keyboard, watches the answer stream in, follows a citation, moves to another page and
// finds the conversation there, asks a follow-up, selects a passage and asks about it, rates an
// answer; then a site whose origin the edge does not allow. Prints what it saw as JSON; the Python
// test checks it, and checks the stored turns and the rating through the RPC.
//   config (stdin): { firstPage, secondPage, refusedPage, question, followUp, passage, comment,
//                     screenshots?: folder for PNGs }
import { readConfig, withBrowser } from "./chromium.mjs";

const config = await readConfig();
const STEP_MS = 30_000;

/** What one turn shows once its answer is complete. */
async function turnReport(page, index) {
  const turn = page.locator(".g-turn").nth(index);
  await turn.locator(".g-state").waitFor({ timeout: STEP_MS });
  return turn.evaluate((element) => ({
    classes: element.className,
    question: element.querySelector(".g-question p")?.textContent ?? "",
    quote: element.querySelector(".g-quote")?.textContent ?? "",
    answer: element.querySelector(".g-answer")?.textContent ?? "",
    busy: element.querySelector(".g-answer")?.getAttribute("aria-busy"),
    state: element.querySelector(".g-state")?.textContent ?? "",
    citations: [...element.querySelectorAll(".g-answer a.g-cite")].map((a) => ({ text: a.textContent, href: a.href })),
    sources: [...element.querySelectorAll(".g-sources a")].map((a) => ({ text: a.textContent, href: a.href })),
    error: element.querySelector(".g-error")?.textContent ?? "",
  }));
}

/** Records, for the answer being written, each state the reader could see: length and aria-busy. */
async function watchAnswers(page) {
  await page.evaluate(() => {
    const root = document.querySelector(".glossator-widget").shadowRoot;
    window.__answerStates = [];
    new MutationObserver(() => {
      const answers = root.querySelectorAll(".g-answer");
      const last = answers[answers.length - 1];
      if (last) window.__answerStates.push({ turn: answers.length - 1, length: last.textContent.length, busy: last.getAttribute("aria-busy") });
    }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

async function ask(page, text) {
  const input = page.locator("#g-input");
  await input.fill(text);
  await input.press("Enter");
}

const shadowActive = (page) =>
  page.evaluate(() => document.querySelector(".glossator-widget")?.shadowRoot?.activeElement?.id ?? null);

const report = await withBrowser(async (context) => {
  const seen = { console: [], pageErrors: [] };
  const page = await context.newPage();
  page.on("console", (message) => seen.console.push(message.text()));
  page.on("pageerror", (error) => seen.pageErrors.push(String(error)));
  await page.goto(config.firstPage);

  // The keyboard: Tab reaches the launcher, Enter opens the dialog with the question box focused.
  const launcher = page.locator(".g-launcher");
  await launcher.waitFor();
  await launcher.focus();
  await page.keyboard.press("Enter");
  const focusAfterOpen = await shadowActive(page);
  await watchAnswers(page);
  await ask(page, config.question);
  const first = await turnReport(page, 0);
  const states = await page.evaluate(() => window.__answerStates);
  if (config.screenshots) await page.screenshot({ path: `${config.screenshots}/widget-answer.png` });

  // Escape closes and gives the focus back; the citation is a link to the section's anchor.
  await page.keyboard.press("Escape");
  const panelHiddenAfterEscape = await page.locator(".g-panel").isHidden();
  const focusAfterClose = await page.evaluate(() => document.querySelector(".glossator-widget").shadowRoot.activeElement?.className ?? null);
  await launcher.click();
  const citation = page.locator(".g-turn").first().locator("a.g-cite").first();
  const citationHref = await citation.getAttribute("href");
  await citation.click();
  await page.waitForURL(citationHref, { timeout: STEP_MS });
  const cited = await page.evaluate(() => ({ url: location.href, target: document.getElementById(decodeURIComponent(location.hash.slice(1)))?.textContent ?? null }));

  // Another page of the site: the conversation is still there, and goes on.
  await page.goto(config.secondPage);
  await page.locator(".g-launcher").click();
  await page.locator(".g-turn").first().waitFor({ timeout: STEP_MS });
  const restored = await page.locator(".g-turn").count();
  const restoredFirst = await turnReport(page, 0);
  await watchAnswers(page);
  await ask(page, config.followUp);
  const second = await turnReport(page, restored);

  // Select a passage of the page: "Ask about this" appears below it and asks with it.
  await page.evaluate((passage) => {
    const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent.indexOf(passage);
      if (at >= 0) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + passage.length);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        return;
      }
    }
    throw new Error(`passage not on the page: ${passage}`);
  }, config.passage);
  const askSelection = page.locator(".g-ask-selection");
  await askSelection.waitFor({ timeout: STEP_MS });
  await askSelection.click();
  const quoted = await page.locator(".g-selected blockquote").textContent();
  const focusAfterSelection = await shadowActive(page);
  await page.locator("#g-input").press("Enter"); // no words of one's own: the widget's question
  const third = await turnReport(page, restored + 1);

  // Rate the first answer down, with a comment.
  const firstTurn = page.locator(".g-turn").first();
  await firstTurn.getByRole("button", { name: "Not helpful" }).click();
  await firstTurn.locator(".g-comment").fill(config.comment);
  await firstTurn.locator(".g-comment").press("Enter");
  await firstTurn.locator(".g-feedback-note", { hasText: "Thank you" }).waitFor({ timeout: STEP_MS });
  const feedbackNote = await firstTurn.locator(".g-feedback-note").textContent();
  const conversation = await page.evaluate(() => Object.fromEntries(Object.entries(sessionStorage)));
  if (config.screenshots) await page.screenshot({ path: `${config.screenshots}/widget-conversation.png` });

  // On a phone the dialog takes the whole screen.
  await page.setViewportSize({ width: 390, height: 844 });
  const phonePanel = await page.locator(".g-panel").boundingBox();
  if (config.screenshots) await page.screenshot({ path: `${config.screenshots}/widget-phone.png` });

  // A site the edge does not allow: the browser refuses the response (CORS); the reader gets a sentence.
  const refusedSeen = [];
  const refused = await context.newPage();
  refused.on("console", (message) => refusedSeen.push(message.text()));
  await refused.goto(config.refusedPage);
  await refused.locator(".g-launcher").click();
  await ask(refused, config.question);
  await refused.locator(".g-error").waitFor({ timeout: STEP_MS });
  const refusedError = await refused.locator(".g-error").textContent();
  const refusedTurn = await refused.locator(".g-turn").first().evaluate((element) => element.className);

  return {
    focusAfterOpen, first, states, panelHiddenAfterEscape, focusAfterClose, citationHref, cited,
    restored, restoredFirst, second, quoted, focusAfterSelection, third, feedbackNote, conversation,
    phonePanel, refusedError, refusedTurn, refusedConsole: refusedSeen, ...seen,
  };
});
process.stdout.write(JSON.stringify(report));
