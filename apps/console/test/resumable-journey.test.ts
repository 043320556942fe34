// A large upload in a real browser (Chromium through playwright-core) against the product as `pnpm start`
// runs it: a 64 MiB file goes through tus with its progress shown, waits while the network is gone and
// goes on when it is back, then the page is reloaded mid-way; the notice of unfinished uploads says the
// file can go on, and choosing it again continues where the server got (the bar starts there, and no
// second file is made). It completes with the same bytes. The browser reaches the product through a
// proxy that drops its connections when the network "goes" (the browser is told it is offline too), and
// its upload speed is held down (DevTools' network throttling) so "mid-way" lasts long enough to act in.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CuttingProxy } from '../../../test/support/cutting-proxy';
import { CHROMIUM, DESKTOP, launchBrowser, PageWatch } from './support/browser';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';

jest.setTimeout(240_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
/** Bytes per second the browser may send: 64 MiB take about 16 s. */
const UPLOAD_SPEED = 4 * MiB;

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

/** The fraction the progress bar of `name` shows. */
const shown = (page: Page, name: string) =>
  page.getByRole('progressbar', { name: `Upload of ${name}` }).evaluate((bar) => (bar as HTMLProgressElement).value);

async function until(page: Page, name: string, fraction: number): Promise<number> {
  for (;;) {
    const value = await shown(page, name);
    if (value >= fraction) return value;
    await page.waitForTimeout(100);
  }
}

describeBrowser('a large upload in Chromium', () => {
  let product: Product;
  let proxy: CuttingProxy;
  let browser: Browser;
  let restoreDns: () => void;
  let dir: string;
  let erin: string;
  let token: string;
  const watch = new PageWatch();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    restoreDns = resolveLocalhostSubdomains();
    proxy = await CuttingProxy.start();
    // Every address the product hands out (the tus upload's too) goes through the proxy.
    [product, browser] = await Promise.all([startProduct({ PUBLIC_PORT: String(proxy.port) }), launchBrowser()]);
    proxy.forwardTo(product.port);
    erin = product.instanceUrl('erin').replace(`:${product.port}`, `:${proxy.port}`);
    const signup = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fullName: 'Erin Example', username: 'erin', email: 'erin@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    });
    token = ((await signup.json()) as { accessToken: string }).accessToken;
    dir = mkdtempSync(path.join(os.tmpdir(), 'resumable-journey-'));
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await product?.stop();
    restoreDns?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('sends 64 MiB through tus, waits out a lost network, survives a reload mid-way and finishes with the same bytes', async () => {
    const video = path.join(dir, 'holiday.mov');
    const bytes = randomBytes(SIZE);
    writeFileSync(video, bytes);
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await watch.newPage(context);
    // Requests cut on purpose (offline, the reload) fail in the browser; the request resuming right after
    // one was cut may find the server still recording the cut one's bytes (423, or 409 for an offset that
    // moved meanwhile), and tus-js-client asks again: all expected.
    for (const status of [0, 409, 423]) watch.expect(status, '/api/v2.6/files/tus');
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const throttle = () =>
      cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: UPLOAD_SPEED });
    await throttle();

    await page.goto(erin);
    await page.getByLabel('Username').fill('erin');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await watch.see(page.getByRole('heading', { name: 'Files' }));

    await page.getByLabel('Upload files', { exact: true }).setInputFiles(video);
    await until(page, 'holiday.mov', 0.15);
    // The network goes (the connection dropped, the browser offline): the upload waits for it, and goes on once it is back.
    await context.setOffline(true);
    proxy.cut();
    await watch.see(page.getByText(/^Waiting for the network… \d+%$/));
    await watch.screen(page, 'upload-waiting');
    await page.waitForTimeout(1000);
    await context.setOffline(false);
    await throttle();
    await watch.see(page.getByText(/^Uploading… \d+%$/));
    const before = await until(page, 'holiday.mov', 0.45);

    // Reloaded mid-way: the upload stops, and the page says it can go on.
    await page.reload();
    await throttle();
    await watch.see(page.getByRole('heading', { name: 'Files' }));
    await watch.see(page.getByText('1 upload did not finish.'));
    await page.getByRole('button', { name: 'Show them' }).click();
    await watch.see(page.getByText(/upload the same file again to continue where it stopped/));
    await watch.screen(page, 'upload-unfinished');

    // The same file again: it goes on from where the server got, not from the start.
    await page.getByLabel('Upload files', { exact: true }).setInputFiles(video);
    const resumedAt = await until(page, 'holiday.mov', 0.01);
    expect(resumedAt).toBeGreaterThan(before - 0.1);
    await page.getByRole('listitem').filter({ hasText: 'holiday.mov' }).getByText('Uploaded').waitFor({ timeout: 120_000 });
    await watch.see(page.getByRole('link', { name: 'holiday.mov' }));

    // One file, completed with the bytes sent; nothing unfinished is left.
    const listing = await fetch(`${erin}/api/v2.6/files/listing?q=holiday`, { headers: { 'X-Auth-Token': token } });
    const { files } = (await listing.json()) as { files: { fileId: string; status: { status: string; size: number } }[] };
    expect(files.map((f) => f.status)).toEqual([{ status: 'Completed', size: SIZE }]);
    const unfinished = await fetch(`${erin}/api/v2.6/files/listing?status=New`, { headers: { 'X-Auth-Token': token } });
    expect(((await unfinished.json()) as { total: number }).total).toBe(0);
    const content = await fetch(`${erin}/api/v2.6/files/content/${files[0]!.fileId}`, { headers: { 'X-Auth-Token': token } });
    const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    expect(sha(new Uint8Array(await content.arrayBuffer()))).toBe(sha(bytes));
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('tus::')))).toEqual([]);
    await context.close();
  });
});
