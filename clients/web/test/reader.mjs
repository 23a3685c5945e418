// A reader on a docs site that embeds the widget, as tests/browser/test_widget.py drives it: asks
// from the keyboard, watches the answer stream in, follows a citation, moves to another page and
// finds the conversation there, asks a follow-up, selects a passage and asks about it, asks what
// the docs do not cover, asks until one question is too many, rates an answer; then a site whose origin the
// edge does not allow, and a page with a wrong widget key. Prints what it saw as JSON; the Python
// test checks it, and checks the stored turns and the rating through the RPC.
//   config (stdin): { firstPage, secondPage, refusedPage, wrongKeyPage, question, followUp, passage,
//                     keyboardPassage, offTopic, oneTooMany, questionsPerMinute, comment,
//                     screenshots?: folder }
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

/** Selects the first occurrence of `passage` in the page's main text, as a reader's drag would. */
async function select(page, passage) {
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
  }, passage);
}

async function ask(page, text) {
  const input = page.locator("#g-input");
  await input.fill(text);
  await input.press("Enter");
}

/** A PNG for the README, when asked for (config.screenshots: a folder). */
async function snap(target, name) {
  if (config.screenshots) await target.screenshot({ path: `${config.screenshots}/${name}.png` });
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
  await select(page, config.passage);
  const askSelection = page.locator(".g-ask-selection");
  await askSelection.waitFor({ timeout: STEP_MS });
  await snap(page, "widget-selection");
  await askSelection.click();
  const quoted = await page.locator(".g-selected blockquote").textContent();
  const focusAfterSelection = await shadowActive(page);
  await page.locator("#g-input").press("Enter"); // no words of one's own: the widget's question
  const third = await turnReport(page, restored + 1);

  // A question the docs do not answer: declined, and it looks different from an answer.
  await ask(page, config.offTopic);
  const declined = await turnReport(page, restored + 2);
  await page.locator(".g-log").evaluate((log) => log.scrollTo(0, log.scrollHeight));
  await snap(page.locator(".g-panel"), "widget-not-covered");

  // Questions in quick succession until one is more than the session may ask a minute (a token
  // bucket: how many get through before depends on the time so far): refused, with the wait shown.
  let rateLimited = null;
  let answeredBeforeLimit = 0;
  for (let index = restored + 3; index < restored + 3 + 2 * config.questionsPerMinute && !rateLimited; index++) {
    await ask(page, config.oneTooMany);
    const turn = page.locator(".g-turn").nth(index);
    await turn.locator(".g-state:not([hidden]), .g-error").first().waitFor({ timeout: STEP_MS });
    if (await turn.locator(".g-error").count()) rateLimited = await turn.locator(".g-error").textContent();
    else answeredBeforeLimit++;
  }

  // Rate the first answer down, with a comment.
  const firstTurn = page.locator(".g-turn").first();
  await firstTurn.getByRole("button", { name: "Not helpful" }).click();
  await firstTurn.locator(".g-comment").fill(config.comment);
  await firstTurn.locator(".g-comment").press("Enter");
  await firstTurn.locator(".g-feedback-note", { hasText: "Thank you" }).waitFor({ timeout: STEP_MS });
  const feedbackNote = await firstTurn.locator(".g-feedback-note").textContent();
  const conversation = await page.evaluate(() => Object.fromEntries(Object.entries(sessionStorage)));

  // The page again: the rated answer shows its rating, done.
  await page.reload();
  await page.locator(".g-launcher").click();
  const ratedAgain = page.locator(".g-turn").first().locator(".g-feedback");
  await ratedAgain.locator(".g-feedback-note", { hasText: "You rated" }).waitFor({ timeout: STEP_MS });
  const ratingShownAgain = await ratedAgain.getByRole("button", { name: "Not helpful" }).getAttribute("aria-pressed");

  // On a phone the dialog takes the whole screen.
  await page.setViewportSize({ width: 390, height: 844 });
  const phonePanel = await page.locator(".g-panel").boundingBox();
  await page.locator(".g-log").evaluate((log) => log.scrollTo(0, 0));
  await snap(page, "widget-phone");

  // A site the edge does not allow: the browser refuses the response (CORS); the reader gets a sentence.
  const refusedSeen = [];
  const refused = await context.newPage();
  refused.on("console", (message) => refusedSeen.push(message.text()));
  await refused.goto(config.refusedPage);
  // From the keyboard this time: select, then Alt+Shift+A opens the dialog about the selection.
  await select(refused, config.keyboardPassage);
  await refused.keyboard.press("Alt+Shift+A");
  const keyboardQuote = await refused.locator(".g-selected blockquote").textContent();
  await ask(refused, config.question);
  await refused.locator(".g-error").waitFor({ timeout: STEP_MS });
  const refusedError = await refused.locator(".g-error").textContent();
  const refusedTurn = await refused.locator(".g-turn").first().evaluate((element) => element.className);

  // A page whose widget key the agent does not know.
  const wrongKey = await context.newPage();
  await wrongKey.goto(config.wrongKeyPage);
  await wrongKey.locator(".g-launcher").click();
  await ask(wrongKey, config.question);
  await wrongKey.locator(".g-error").waitFor({ timeout: STEP_MS });
  const wrongKeyError = await wrongKey.locator(".g-error").textContent();

  return {
    focusAfterOpen, first, states, panelHiddenAfterEscape, focusAfterClose, citationHref, cited,
    restored, restoredFirst, second, quoted, focusAfterSelection, third, declined, feedbackNote, ratingShownAgain, conversation,
    rateLimited, answeredBeforeLimit, phonePanel, refusedError, refusedTurn, refusedConsole: refusedSeen, wrongKeyError, keyboardQuote, ...seen,
  };
});
process.stdout.write(JSON.stringify(report));
