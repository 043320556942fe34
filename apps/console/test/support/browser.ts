// Debian's Chromium driven by playwright-core, and a watch on every page: console errors, page
// errors, failed requests and error answers all fail the test, except the ones a test expects.
// Each screen is checked at desktop and phone width, light and dark.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type Request } from 'playwright-core';
import { accessibilityProblems } from './accessibility';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT = path.resolve(__dirname, '../../../../.test-output/browser');
/** With UPDATE_SCREENSHOTS=1 a run also writes the screens the docs show, under docs/screenshots. */
export const DOCS_SCREENSHOTS = path.resolve(__dirname, '../../../../docs/screenshots');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // *.localhost is loopback to Chromium, tried at ::1 first; the product and every test server listen on
    // 127.0.0.1 only, so the browser goes there, as the tests' own resolver does (localhost-dns.ts).
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-dev-shm-usage',
      '--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP localhost 127.0.0.1',
    ],
  });
}

/** An answer a test provokes on purpose: this status from an address containing this text. */
interface Expected {
  status: number;
  url: string;
}

/** How many of the latest answers `see` reports when what it waits for does not show. */
const ANSWERS_KEPT = 20;

/** Collects every fault of the pages it watches: console errors, page errors, failed requests, error answers. */
export class PageWatch {
  readonly problems: string[] = [];
  private expected: Expected[] = [];
  /** Per watched page, its requests not answered yet and its latest answers: what it waited for when a test timed out. */
  private readonly traffic = new Map<Page, { unanswered: Set<Request>; answers: string[] }>();

  /** Lets `status` answers from addresses containing `url` pass, until the test ends (see `endTest`). */
  expect(status: number, url: string): void {
    this.expected.push({ status, url });
  }

  /** The problems of the test that ends, and the expectations cleared for the next one. */
  endTest(): string[] {
    this.expected = [];
    return this.problems.splice(0);
  }

  private isExpected(status: number, url: string): boolean {
    return this.expected.some((e) => e.status === status && url.includes(e.url));
  }

  watch(page: Page): Page {
    const traffic = { unanswered: new Set<Request>(), answers: [] as string[] };
    this.traffic.set(page, traffic);
    page.on('close', () => this.traffic.delete(page));
    page.on('request', (request) => traffic.unanswered.add(request));
    page.on('requestfinished', (request) => traffic.unanswered.delete(request));
    page.on('requestfailed', (request) => traffic.unanswered.delete(request));
    page.on('console', (message) => {
      const source = message.location().url;
      // Chromium reports each error answer on the console too: expected answers are not faults there either.
      const answered = /status of (\d{3})/.exec(message.text());
      if (answered && this.isExpected(Number(answered[1]), source)) return;
      if (message.type() === 'error') this.problems.push(`console error on ${page.url()}: ${message.text()} (${source})`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText;
      // A preview's blob: address, or a picture, still loading when its screen closes or its list moves on
      // (a page turned, a sort) is cancelled by the page, not failed.
      if (reason === 'net::ERR_ABORTED' && (request.url().startsWith('blob:') || request.resourceType() === 'image')) return;
      // Chromium's own PDF viewer (a built-in extension) loads its parts through chrome-extension:
      // addresses; leaving a preview before they arrive cancels them. They are the browser's, not the page's.
      if (request.url().startsWith('chrome-extension:')) return;
      // An expected error answer the browser then refuses to use (an image that is an HTML 404) is expected too.
      if (this.expected.some((e) => request.url().includes(e.url))) return;
      this.problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
    });
    page.on('response', (response) => {
      // The product's answers, not the browser's own (chrome:, its PDF viewer's extension, blob: previews).
      if (response.url().startsWith('http')) {
        traffic.answers.push(`${response.status()} ${response.request().method()} ${response.url()}`);
        if (traffic.answers.length > ANSWERS_KEPT) traffic.answers.shift();
      }
      if (response.status() >= 400 && !this.isExpected(response.status(), response.url())) {
        this.problems.push(`error answer: ${response.status()} ${response.request().method()} ${response.url()}`);
      }
    });
    return page;
  }

  /**
   * Waits for `locator` to be shown. When it is not, the error also says what its page showed, which
   * requests were still unanswered and the latest answers: a run on a loaded machine that fails where
   * others pass then tells why.
   */
  async see(locator: Locator): Promise<void> {
    try {
      await locator.waitFor();
    } catch (error) {
      const page = locator.page();
      const words = await page.innerText('body', { timeout: 2_000 }).catch(() => '(the page did not answer)');
      const { unanswered = new Set<Request>(), answers = [] } = this.traffic.get(page) ?? {};
      const waiting = [...unanswered].map((request) => `${request.method()} ${request.url()}`);
      throw new Error(
        [
          (error as Error).message,
          `The page at ${page.url()} showed:`,
          words.slice(0, 2_000),
          `Unanswered: ${waiting.join(', ') || 'none'}`,
          'Latest answers:',
          ...answers,
        ].join('\n'),
        { cause: error },
      );
    }
  }

  async newPage(context: BrowserContext): Promise<Page> {
    return this.watch(await context.newPage());
  }

  /**
   * The screen at desktop and phone width (a screenshot of each) and dark at desktop width (a
   * screenshot when `dark` asks for one for the docs): its accessibility problems (in dark, its
   * contrast) and, on the phone, any horizontal scrolling are all counted as problems of the test.
   * `fullPage: false` shoots the window only (a timeline thousands of pixels long).
   * The page is left at the size and colours it had.
   */
  async screen(page: Page, name: string, { dark = false, fullPage = true }: { dark?: boolean; fullPage?: boolean } = {}): Promise<void> {
    const size = page.viewportSize() ?? DESKTOP;
    const shots: [string, { width: number; height: number }, 'light' | 'dark', boolean][] = [
      ['desktop', DESKTOP, 'light', true],
      ['phone', PHONE, 'light', true],
      ['dark', DESKTOP, 'dark', dark],
    ];
    for (const [variant, viewport, colorScheme, forDocs] of shots) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      // From the top (a sticky header drawn mid-page otherwise), one frame after the new layout.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve(window.scrollTo(0, 0)))));
      // Dark mode changes colours only: its screenshot is taken when the docs show it.
      const dark = colorScheme === 'dark';
      if (forDocs || !dark) await screenshot(page, `${name}-${variant}`, forDocs, fullPage);
      for (const problem of await accessibilityProblems(page, { contrastOnly: dark }))
        this.problems.push(`accessibility of ${name} (${variant}): ${problem}`);
      if (viewport === PHONE) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 0) this.problems.push(`${name} scrolls sideways by ${overflow} px on a phone`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(size);
  }
}

let shots = 0;

/** Starts a run's screenshots afresh, so the folder shows this run's screens only. */
export function clearScreenshots(): void {
  rmSync(OUTPUT, { recursive: true, force: true });
  shots = 0;
}

/** Saves a screenshot under the test output folder (git-ignored), and for the docs when asked to. */
export async function screenshot(page: Page, name: string, forDocs = false, fullPage = true): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  shots += 1;
  const file = path.join(OUTPUT, `${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage });
  if (forDocs && process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    copyFileSync(file, path.join(DOCS_SCREENSHOTS, `${name}.png`));
  }
  return file;
}
