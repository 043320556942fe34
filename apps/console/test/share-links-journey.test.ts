// A share link in a real browser (Chromium through playwright-core) against the product as `pnpm start`
// runs it: the owner makes a link with a password from a file's screen and copies its address; someone
// without an account opens it in a fresh browser on a phone, gives the password, sees the file and
// downloads the same bytes; the owner revokes it, and the link's page then says so. Every page is checked
// at desktop and phone width, light and dark (axe-core, sideways scrolling).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchBrowser, PageWatch, PHONE } from './support/browser';
import { uploadThroughApi } from './support/files-api';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';

jest.setTimeout(180_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const LINK_PASSWORD = 'for-the-accountant';
const REPORT = '%PDF-1.4\n% not a real tax report, but bytes to compare\n'.repeat(40);

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

describeBrowser('a share link in Chromium', () => {
  let product: Product;
  let browser: Browser;
  let restoreDns: () => void;
  let owner: Page;
  let dana: string;
  let fileId: string;
  let linkUrl: string;
  const watch = new PageWatch();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    restoreDns = resolveLocalhostSubdomains();
    [product, browser] = await Promise.all([startProduct(), launchBrowser()]);
    dana = product.instanceUrl('dana');
    const signup = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fullName: 'Dana Example', username: 'dana', email: 'dana@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    });
    const { accessToken } = (await signup.json()) as { accessToken: string };
    fileId = await uploadThroughApi({ instanceUrl: dana, token: accessToken }, 'tax.pdf', REPORT);
  });
  afterAll(async () => {
    await browser?.close();
    await product?.stop();
    restoreDns?.();
  });
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('lets the owner make a link with a password from the file, and copy its address', async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dana });
    owner = await watch.newPage(context);
    await owner.goto(dana);
    await owner.getByLabel('Username').fill('dana');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.goto(`${dana}/#/files/${encodeURIComponent(fileId)}`);
    await watch.see(owner.getByText('No link shares this file.'));

    await owner.getByRole('button', { name: 'Share link' }).click();
    const dialog = owner.getByRole('dialog', { name: 'Share link to tax.pdf' });
    await dialog.getByLabel('Expires').selectOption({ label: 'In 7 days' });
    await dialog.getByLabel('Password (optional)').fill(LINK_PASSWORD);
    await dialog.getByLabel('Most downloads (optional)').fill('5');
    await watch.screen(owner, 'share-link-dialog');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const address = dialog.getByLabel(/Anyone with this address/);
    await watch.see(address);
    linkUrl = await address.inputValue();
    expect(linkUrl).toMatch(new RegExp(`^${dana}/s/[A-Za-z0-9_-]{32}$`));
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await watch.see(dialog.getByText('Copied.'));
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toBe(linkUrl);
    await watch.screen(owner, 'share-link-made');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await watch.see(owner.getByText('0 of 5 downloads · 0 views · not used yet', { exact: false }));
  });

  it('opens the link in a fresh browser on a phone: the password, then the file, downloaded byte for byte', async () => {
    const stranger = await watch.newPage(await browser.newContext({ viewport: PHONE, acceptDownloads: true }));
    // The page asks for the password with a 401, and the wrong one is answered so.
    watch.expect(401, '/s/');
    // The status and the words of the page, so that a page other than the password's says what it is.
    const opened = await stranger.goto(linkUrl);
    expect({ status: opened?.status(), words: await stranger.innerText('body') }).toEqual({
      status: 401,
      words: expect.stringContaining('This link needs a password'),
    });
    await watch.see(stranger.getByRole('heading', { name: 'This link needs a password' }));
    expect(await stranger.content()).not.toContain('tax.pdf');
    await watch.screen(stranger, 'share-link-password');
    await stranger.getByLabel('Password').fill('not-the-password');
    await stranger.getByRole('button', { name: 'Open' }).click();
    await watch.see(stranger.getByRole('alert').filter({ hasText: 'That password is not right.' }));
    await stranger.getByLabel('Password').fill(LINK_PASSWORD);
    await stranger.getByRole('button', { name: 'Open' }).click();

    await watch.see(stranger.getByRole('heading', { name: 'tax.pdf' }));
    await watch.see(stranger.getByText('PDF document · 2.1 KiB'));
    await watch.see(stranger.getByText('5 downloads left.', { exact: false }));
    expect(await stranger.locator('iframe[title="Preview of tax.pdf"]').count()).toBe(1);
    await watch.screen(stranger, 'share-link-page');

    // Chromium reports the navigation that turned into a download as aborted.
    watch.expect(200, '/blobs/');
    const [download] = await Promise.all([stranger.waitForEvent('download'), stranger.getByRole('link', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('tax.pdf');
    expect(sha256(readFileSync(await download.path()))).toBe(sha256(REPORT));
    await stranger.context().close();
  });

  it('is revoked by the owner, after which the link says it was turned off', async () => {
    await owner.reload();
    await watch.see(owner.getByText('1 of 5 downloads', { exact: false }));
    await owner.getByRole('button', { name: /^Revoke the link made/ }).click();
    await watch.see(owner.getByText('The link is revoked: it opens nothing any more.'));
    await watch.see(owner.getByText(/^Revoked link, made/));

    const stranger = await watch.newPage(await browser.newContext({ viewport: PHONE }));
    watch.expect(404, '/s/');
    await stranger.goto(linkUrl);
    await watch.see(stranger.getByText('This link was turned off by the person who shared it.'));
    await watch.screen(stranger, 'share-link-revoked');
    await stranger.context().close();
  });

  it('shows the owner who used the link in the activity log', async () => {
    await owner.goto(`${dana}/#/activity`);
    await watch.see(owner.getByText('Someone with your link to tax.pdf downloaded it'));
    await watch.see(owner.getByText('You revoked the share link to tax.pdf'));
  });
});
