// Headless Chromium (Debian's, at $GLOSSATOR_CHROMIUM or /usr/bin/chromium) through playwright-core,
// with a fresh profile that is deleted afterwards; and the JSON config the Python side sends on stdin.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function readConfig() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text);
}

/** Runs `use(context)` in a browser with a fresh --user-data-dir; always closes and removes both. */
export async function withBrowser(use, viewport = { width: 1280, height: 800 }) {
  const profile = await mkdtemp(join(tmpdir(), "glossator-chromium-"));
  // playwright passes the profile as --user-data-dir itself (it refuses the flag in args).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.GLOSSATOR_CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
    viewport,
  });
  try {
    return await use(context);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}
