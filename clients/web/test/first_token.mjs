// The browser half of bench/browser_first_token.py: one page of the docs site with the widget, kept
// open; for each JSON line {question} on stdin it starts a new conversation, asks through the
// widget and answers with a JSON line: the widget's own measure from the call to the first answer
// text on screen (performance "glossator:first-token") and the time until the answer is complete.
import { createInterface } from "node:readline";
import { withBrowser } from "./chromium.mjs";

const page_url = process.argv[2];

await withBrowser(async (context) => {
  const page = await context.newPage();
  await page.goto(page_url);
  await page.locator(".g-launcher").click();
  for await (const line of createInterface({ input: process.stdin })) {
    const { question } = JSON.parse(line);
    await page.locator(".g-restart").click(); // a new session each time, as the native client's
    const started = Date.now();
    await page.locator("#g-input").fill(question);
    await page.locator("#g-input").press("Enter");
    const turn = page.locator(".g-turn").last();
    await turn.locator(".g-state:not([hidden]), .g-error").first().waitFor({ timeout: 120_000 });
    const totalMs = Date.now() - started;
    const result = await page.evaluate(() => {
      const measures = performance.getEntriesByName("glossator:first-token");
      const error = document.querySelector(".glossator-widget").shadowRoot.querySelector(".g-turn:last-child .g-error");
      performance.clearMeasures("glossator:first-token");
      return { firstTokenMs: measures.at(-1)?.duration ?? null, error: error?.textContent ?? "" };
    });
    process.stdout.write(`${JSON.stringify({ ...result, totalMs })}\n`);
  }
});
