// The photo timeline in a real browser (Debian's Chromium) over 10,002 pictures: two uploaded as anyone
// uploads them (their thumbnails made by the worker), and 10,000 seeded with bulk SQL and tiny
// thumbnails written to the instance's own store. The grid shows them by day under month headings,
// keeps only the rows near the window in the page while it scrolls to the very last picture, and opens
// one over the whole screen (buttons, keys, a swipe). The last test measures the time to the first
// screen and the scroll's frames in Chromium's performance trace and writes the figures to
// .test-output/browser/photos-performance.json (docs/console.md keeps them): a measurement, never an
// assertion on time.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { LocalBlobStore, objectKey, thumbnailKey } from '../../../packages/storage/src';
import { CHROMIUM, clearScreenshots, DESKTOP, launchBrowser, OUTPUT, PageWatch, PHONE } from './support/browser';
import { inParallel, uploadThroughApi } from './support/files-api';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';

jest.setTimeout(300_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const SEEDED = 10_000;
/** Tiny WebP thumbnails (landscape, portrait, panorama) and the sizes the timeline is told. */
const THUMBNAILS: [Buffer, number, number][] = [
  [
    Buffer.from('UklGRkYAAABXRUJQVlA4IDoAAABQAwCdASogABgAPtFiqk+oJaQiKAgBABoJZQDIxoAABDrIAAD51oXtEg+RkJ2qv13i0ml/+UYYAAAA', 'base64'),
    320,
    240,
  ],
  [
    Buffer.from('UklGRkYAAABXRUJQVlA4IDoAAAAwAwCdASoYACAAPtFiqk+oJaOiKAgBABoJZQC7LoAAQFBQAP7Iv/0KNlExT+3gUjggLjIWpQL5AAAA', 'base64'),
    240,
    320,
  ],
  [Buffer.from('UklGRjwAAABXRUJQVlA4IDAAAADQAgCdASogAAwAPtFWo0uoJKMhsAgBABoJQBYdhg2AAP7UlDxNXXrS3NwD0kCAAAA=', 'base64'), 320, 120],
];
const seededName = (n: number) => `IMG_${String(n).padStart(5, '0')}.jpg`;

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The pictures drawn now: their names, and how many tiles the page holds. */
const tiles = (page: Page) => page.locator('.photo-tile img').evaluateAll((imgs) => imgs.map((img) => (img as HTMLImageElement).alt));

/** A JPEG of a sky over the sea, drawn by the browser: a picture as a camera would give one. */
async function seaPicture(page: Page, width: number, height: number): Promise<Buffer> {
  const data = await page.evaluate(
    ({ w, h }) => {
      const canvas = document.createElement('canvas');
      [canvas.width, canvas.height] = [w, h];
      const g = canvas.getContext('2d') as CanvasRenderingContext2D;
      const sky = g.createLinearGradient(0, 0, 0, h * 0.6);
      sky.addColorStop(0, '#2b5fa8');
      sky.addColorStop(1, '#f4b26a');
      g.fillStyle = sky;
      g.fillRect(0, 0, w, h * 0.6);
      const sea = g.createLinearGradient(0, h * 0.6, 0, h);
      sea.addColorStop(0, '#1f6f8b');
      sea.addColorStop(1, '#0b2f4a');
      g.fillStyle = sea;
      g.fillRect(0, h * 0.6, w, h * 0.4);
      g.fillStyle = '#ffe08a';
      g.beginPath();
      g.arc(w * 0.7, h * 0.5, Math.min(w, h) * 0.08, 0, Math.PI * 2);
      g.fill();
      return canvas.toDataURL('image/jpeg', 0.85).split(',')[1] as string;
    },
    { w: width, h: height },
  );
  return Buffer.from(data, 'base64');
}

/** Resolves once every picture in the window has loaded. */
const screenLoaded = (page: Page) =>
  page.waitForFunction(() => {
    const shown = [...document.querySelectorAll<HTMLImageElement>('.photo-tile img')].filter((img) => {
      const box = img.getBoundingClientRect();
      return box.bottom > 0 && box.top < innerHeight;
    });
    return shown.length > 0 && shown.every((img) => img.complete && img.naturalWidth > 0);
  });

describeBrowser('the photo timeline in Chromium', () => {
  let product: Product;
  let browser: Browser;
  let restoreDns: () => void;
  let alice: string;
  let token: string;
  let page: Page;
  const watch = new PageWatch();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    clearScreenshots();
    restoreDns = resolveLocalhostSubdomains();
    [product, browser] = await Promise.all([startProduct(), launchBrowser()]);
    alice = product.instanceUrl('alice');
    const signup = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fullName: 'Alice', username: 'alice', email: 'alice@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    });
    expect(signup.status).toBe(201);
    token = ((await signup.json()) as { accessToken: string }).accessToken;

    // 10,000 pictures of the last months, a few an hour, seeded as rows and tiny thumbnails.
    const db = new pg.Client({ connectionString: product.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ instanceId: string; userId: string }>(
        `SELECT i."id" AS "instanceId", u."id" AS "userId" FROM "Instance" i JOIN "User" u ON u."instanceId" = i."id"
         WHERE i."address" = 'alice.pds.localhost' AND u."kind" = 'owner'`,
      );
      const { instanceId, userId } = rows[0]!;
      await db.query(
        `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "status", "size", "thumbnail", "width", "height",
           "takenAt", "uploaderId", "dateCreated", "lastUpdated", "createdAt")
         SELECT $1::uuid, 'seed' || i || '.jpg', 'IMG_' || lpad(i::text, 5, '0') || '.jpg', 'camera', '{}', 'Completed', 1000, true,
           (ARRAY[320, 240, 320])[i % 3 + 1], (ARRAY[240, 320, 120])[i % 3 + 1], $3::timestamptz - i * interval '37 minutes', $2::uuid,
           $3::timestamptz - i * interval '37 minutes', $3::timestamptz, $3::timestamptz
         FROM generate_series(1, ${SEEDED}) i`,
        [instanceId, userId, new Date(Date.now() - 3_600_000)],
      );
      await db.query('ANALYZE "File"');
    } finally {
      await db.end();
    }
    const store = new LocalBlobStore({ dir: path.join(product.dataDir, 'blobs'), masterKey: product.masterKey, maxBytes: 1024 * 1024 });
    await store.init();
    await inParallel(
      Array.from({ length: SEEDED }, (_, i) => i + 1),
      16,
      async (n) => {
        const [bytes] = THUMBNAILS[n % 3]!;
        const fileId = `seed${n}.jpg`;
        await store.write(thumbnailKey('alice.pds.localhost', fileId), Readable.from([bytes]), { contentType: 'image/webp' });
        // The newest few have content too: the viewer shows them (and loads their neighbours).
        if (n <= 10) await store.write(objectKey('alice.pds.localhost', fileId), Readable.from([bytes]), { contentType: 'image/webp' });
      },
    );
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await product?.stop();
    restoreDns?.();
  });
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('shows every picture by day under month headings, and only the rows near the window while scrolling to the last', async () => {
    // Two uploaded as anyone does: their thumbnails (and sizes) come from the worker.
    page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await page.goto(`${alice}/`);
    await uploadThroughApi({ instanceUrl: alice, token }, 'beach.jpg', await seaPicture(page, 1280, 800));
    await uploadThroughApi({ instanceUrl: alice, token }, 'portrait.jpg', await seaPicture(page, 600, 900));
    await eventually(async () => {
      const res = await fetch(`${alice}/api/v2.6/files/photos?take=1`, { headers: { 'X-Auth-Token': token } });
      return ((await res.json()) as { total: number }).total === SEEDED + 2 ? true : undefined;
    }, 'the thumbnails of the uploads');

    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'Photos' }).click();
    await watch.see(page.locator('.summary').filter({ hasText: '10,002 photos' }));
    await screenLoaded(page);
    // The newest first: the two uploads, then the seeded pictures by their dates.
    expect((await tiles(page)).slice(0, 4)).toEqual(['portrait.jpg', 'beach.jpg', seededName(1), seededName(2)]);
    await watch.see(
      page.getByRole('heading', { level: 2, name: new Date().toLocaleDateString('en-GB', { month: 'long', year: 'numeric' }) }),
    );
    // A portrait's tile is taller than wide, a panorama's wider: the grid keeps each picture's proportions.
    const [portrait, panorama] = await Promise.all(
      [seededName(1), seededName(2)].map((name) =>
        page
          .getByRole('img', { name, exact: true })
          .evaluate((img) => img.getBoundingClientRect().width / img.getBoundingClientRect().height),
      ),
    );
    expect(portrait).toBeCloseTo(240 / 320, 1);
    expect(panorama).toBeCloseTo(320 / 120, 1);
    await watch.screen(page, 'photos', { dark: true, fullPage: false });

    // To the very last picture, page after page: the page never holds more than a few windows of tiles.
    let most = 0;
    for (let step = 0; step < 400; step++) {
      await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForTimeout(50);
      const names = await tiles(page);
      most = Math.max(most, names.length);
      if (names.includes(seededName(SEEDED))) break;
    }
    // The oldest picture ends the timeline.
    expect((await tiles(page)).at(-1)).toBe(seededName(SEEDED));
    expect(most).toBeLessThan(300);
    await screenLoaded(page);
    await watch.screen(page, 'photos-end', { fullPage: false });
  });

  it('opens a picture over the whole screen, and moves on with the buttons, the arrow keys and a swipe', async () => {
    await page.evaluate(() => scrollTo(0, 0));
    await page.getByRole('link', { name: 'beach.jpg' }).click();
    const viewer = page.getByRole('dialog');
    await watch.see(viewer.getByText('beach.jpg', { exact: true }));
    // The picture itself, not its thumbnail.
    await page.waitForFunction(
      () => (document.querySelector<HTMLImageElement>('.viewer img[alt="beach.jpg"]')?.naturalWidth ?? 0) === 1280,
    );
    expect(page.url()).toMatch(/#\/photos\/consolebeach\.jpg$/);
    await watch.screen(page, 'photo-viewer', { fullPage: false });
    await page.keyboard.press('ArrowRight');
    await watch.see(viewer.getByText(seededName(1), { exact: true }));
    await page.keyboard.press('ArrowLeft');
    await watch.see(viewer.getByText('beach.jpg', { exact: true }));
    await viewer.getByRole('button', { name: 'Previous photo' }).click();
    await watch.see(viewer.getByText('portrait.jpg', { exact: true }));
    // The newest has nothing before it.
    await expect(viewer.getByRole('button', { name: 'Previous photo' }).count()).resolves.toBe(0);
    await viewer.getByRole('button', { name: 'Next photo' }).click();
    await watch.see(viewer.getByText('beach.jpg', { exact: true }));
    // A swipe to the left, as a finger (or a mouse held down) makes it.
    await page.mouse.move(900, 400);
    await page.mouse.down();
    await page.mouse.move(500, 420, { steps: 5 });
    await page.mouse.up();
    await watch.see(viewer.getByText(seededName(1), { exact: true }));
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'detached' });
    expect(page.url()).toMatch(/#\/photos$/);

    // On a phone too.
    await page.setViewportSize(PHONE);
    await page.getByRole('link', { name: seededName(3), exact: true }).click();
    await watch.see(viewer.getByText(seededName(3), { exact: true }));
    await page.keyboard.press('Escape');
    await page.setViewportSize(DESKTOP);
  });

  it('measures the time to the first screen and the frames of a long scroll in Chromium’s trace', async () => {
    const measured = await browser.newContext({ viewport: DESKTOP });
    const tab = await watch.newPage(measured);
    // Loaded whole (its icon too) before it is left for the measured load.
    await tab.goto(`${alice}/`, { waitUntil: 'networkidle' });
    await tab.evaluate((session) => sessionStorage.setItem('pds.session', session), token);
    // The measured load is a whole page's, from another document (a hash change alone loads nothing).
    await tab.goto('about:blank');

    // First screen: from the navigation to every picture in the window drawn.
    await browser.startTracing(tab, {
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'blink.user_timing'],
    });
    await tab.goto(`${alice}/#/photos`);
    await screenLoaded(tab);
    const firstScreen = await tab.evaluate(() => ({
      shownMs: Math.round(performance.now()),
      firstPageMs: Math.round(
        (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((e) => e.name.includes('/files/photos'))
          ?.responseEnd ?? 0,
      ),
    }));
    await browser.stopTracing();

    // A long scroll: 40 px a frame for 600 frames (about ten seconds), pages read on the way.
    await browser.startTracing(tab, {
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'toplevel'],
    });
    const intervals = await tab.evaluate(
      () =>
        new Promise<number[]>((resolve) => {
          const gaps: number[] = [];
          let last = 0;
          const frame = (now: number) => {
            if (last) gaps.push(now - last);
            last = now;
            scrollBy(0, 40);
            if (gaps.length < 600) requestAnimationFrame(frame);
            else resolve(gaps);
          };
          requestAnimationFrame(frame);
        }),
    );
    const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents: TraceEvent[] };
    const tiles = await tab.locator('.photo-tile').count();

    const main = mainThread(trace.traceEvents);
    const tasks = trace.traceEvents.filter((e) => e.name === 'RunTask' && e.pid === main.pid && e.tid === main.tid && e.dur !== undefined);
    const taskMs = tasks.map((e) => (e.dur as number) / 1000).sort((a, b) => a - b);
    const drawn = trace.traceEvents.filter((e) => e.name === 'DrawFrame' || e.name === 'Commit').length;
    const sorted = [...intervals].sort((a, b) => a - b);
    const at = (list: number[], q: number) => Math.round((list[Math.min(list.length - 1, Math.floor(list.length * q))] ?? 0) * 10) / 10;
    const figures = {
      pictures: SEEDED + 2,
      firstScreen,
      scroll: {
        frames: intervals.length,
        medianFrameMs: at(sorted, 0.5),
        p95FrameMs: at(sorted, 0.95),
        framesOver16_7ms: intervals.filter((gap) => gap > 1000 / 60 + 1).length,
        longestMainThreadTaskMs: Math.round((taskMs[taskMs.length - 1] ?? 0) * 10) / 10,
        mainThreadTasksOver50ms: taskMs.filter((ms) => ms > 50).length,
        compositorEvents: drawn,
        tilesInPage: tiles,
      },
    };
    mkdirSync(OUTPUT, { recursive: true });
    writeFileSync(path.join(OUTPUT, 'photos-performance.json'), `${JSON.stringify(figures, null, 2)}\n`);
    process.stdout.write(`\nphoto timeline over ${SEEDED + 2} pictures: ${JSON.stringify(figures)}\n`);
    // What was measured is there (its values are reported, not judged).
    expect(figures.scroll.frames).toBe(600);
    expect(taskMs.length).toBeGreaterThan(0);
    await measured.close();
  });
});

interface TraceEvent {
  name: string;
  pid: number;
  tid: number;
  dur?: number;
  args?: { name?: string };
}

/** The renderer's main thread (CrRendererMain) of the page traced. */
function mainThread(events: TraceEvent[]): { pid: number; tid: number } {
  const named = events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  // Of the renderers, the one that ran the most tasks is the page's.
  const busiest = named
    .map((e) => ({
      pid: e.pid,
      tid: e.tid,
      tasks: events.filter((t) => t.name === 'RunTask' && t.pid === e.pid && t.tid === e.tid).length,
    }))
    .sort((a, b) => b.tasks - a.tasks)[0];
  if (!busiest) throw new Error('the trace names no renderer main thread');
  return busiest;
}
