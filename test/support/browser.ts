/**
 * Headless Chromium for the dashboard tests: one persistent-context launch (Debian's `chromium`, fresh profile
 * directory given by the caller) and one page whose console errors/warnings, page errors, failed requests,
 * HTTP ≥ 400 responses and dialogs are collected for the test to assert empty.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

export const CHROMIUM = "/usr/bin/chromium";

export interface WatchedBrowser {
  browser: BrowserContext;
  page: Page;
  /** Console errors/warnings, page errors, failed requests and HTTP ≥ 400 responses, in order. */
  problems: string[];
  /** Messages of dialogs the page opened (each dismissed). */
  dialogs: string[];
}

/** Throws when Chromium is not installed; creates the screenshot directory. */
export function requireChromium(artifacts: string): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run installs it)`);
  mkdirSync(artifacts, { recursive: true });
}

/** Launches headless Chromium with the user data dir `profile` and watches its first page. */
export async function launchWatchedChromium(profile: string): Promise<WatchedBrowser> {
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) =>
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ""}`),
  );
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { browser, page, problems, dialogs };
}

/** A full-page screenshot `<artifacts>/<name>.png`. */
export async function shot(page: Page, artifacts: string, name: string): Promise<void> {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** The page's chart was drawn by uPlot: a canvas larger than 100×100 px. */
export async function expectChart(page: Page): Promise<void> {
  await page.waitForSelector("[data-chart][data-drawn=uplot] .uplot canvas", { timeout: 5000 });
  const size = await page.$eval("[data-chart] .uplot canvas", (c) => {
    const r = c.getBoundingClientRect();
    return { w: r.width, h: r.height, uplot: typeof (globalThis as unknown as { uPlot?: unknown }).uPlot };
  });
  expect(size.uplot).toBe("function");
  expect(size.w).toBeGreaterThan(100);
  expect(size.h).toBeGreaterThan(100);
}
