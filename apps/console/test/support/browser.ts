// Debian's Chromium driven by playwright-core, and a watch on every page: console errors, page
// errors, failed requests and error answers all fail the test.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { accessibilityProblems } from './accessibility';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT = path.resolve(__dirname, '../../../../.test-output/browser');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** Collects every fault of the pages it watches: console errors, page errors, failed requests, error answers. */
export class PageWatch {
  readonly problems: string[] = [];

  watch(page: Page): Page {
    page.on('console', (message) => {
      if (message.type() === 'error') this.problems.push(`console error on ${page.url()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText;
      // A preview's blob: address still loading when its screen closes is cancelled, not failed.
      if (request.url().startsWith('blob:') && reason === 'net::ERR_ABORTED') return;
      this.problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) {
        this.problems.push(`error answer: ${response.status()} ${response.request().method()} ${response.url()}`);
      }
    });
    return page;
  }

  async newPage(context: BrowserContext): Promise<Page> {
    return this.watch(await context.newPage());
  }

  /** A screenshot of the screen, and its accessibility problems counted as problems of the test. */
  async screen(page: Page, name: string): Promise<void> {
    await screenshot(page, name);
    for (const problem of await accessibilityProblems(page)) this.problems.push(`accessibility of ${name}: ${problem}`);
  }
}

let shots = 0;

/** Starts a run's screenshots afresh, so the folder shows this run's screens only. */
export function clearScreenshots(): void {
  rmSync(OUTPUT, { recursive: true, force: true });
  shots = 0;
}

/** Saves a screenshot of the screen under the test output folder (git-ignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  shots += 1;
  const file = path.join(OUTPUT, `${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
