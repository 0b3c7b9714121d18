import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Flags for a closed network: without the background-networking ones Chromium keeps reaching for
 * Google's hosts (/work/.library/env/machines/node.md). `--no-sandbox` because CI runs as root.
 */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Where screenshots go (gitignored), for a person to look at. */
export const RESULTS_DIR = join(import.meta.dirname, "..", "test-results");

/** Headless Chromium through playwright-core, with a fresh profile (playwright makes one per launch). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

/** A page with a phone-sized (390×844) or desktop (1280×800) viewport. */
export async function newPage(browser: Browser, size: "phone" | "desktop" = "desktop"): Promise<Page> {
  const viewport = size === "phone" ? { width: 390, height: 844 } : { width: 1280, height: 800 };
  const context = await browser.newContext({ viewport });
  return context.newPage();
}

/** Saves a full-page screenshot as `test-results/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
