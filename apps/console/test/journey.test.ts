// The web console in a real browser (Debian's Chromium through playwright-core) against the product
// as `pnpm start` runs it: sign up → log in → upload two files with progress → preview → share with a
// second user, who sees only that file → make it public and fetch it anonymously → a third-party
// app logs in through #/hatlogin with hat-js and writes a record → the owner sees it in the data
// browser. And: a redirect to a foreign origin never receives a token.
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems } from './support/accessibility';
import { CHROMIUM, clearScreenshots, launchBrowser, PageWatch } from './support/browser';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';
import { startThirdPartyApp, type ThirdPartyApp } from './support/third-party-app';

jest.setTimeout(120_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const TEXT = 'Shopping list\n- apples\n- bread\n';

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function logIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** The dex administrator pushes a certified app to one instance (README: "Push a certified app"). */
async function pushApp(product: Product, instance: string, record: object): Promise<void> {
  const login = await fetch(`${product.instanceUrl('admin')}/users/access_token`, {
    headers: { username: 'admin', password: product.adminPassword },
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  // The instance registers with dex in the background after sign-up; until then dex answers 404.
  await eventually(async () => {
    const pushed = await fetch(`${product.dexUrl}/api/users/update-application?hatFilter=${instance}&cluster=pds.localhost`, {
      method: 'POST',
      headers: { 'x-auth-token': accessToken, 'Content-Type': 'application/json' },
      body: JSON.stringify(record),
    });
    return pushed.status === 202 ? true : undefined;
  }, 'dex to accept the app push');
}

// Chromium is part of the test environment (.ci/run installs it): missing, the suite fails and says so.
// SKIP_BROWSER_TESTS=1 skips it on purpose, e.g. on a machine without a browser.
const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

describeBrowser('web console in Chromium', () => {
  let product: Product;
  let app: ThirdPartyApp;
  let foreign: ThirdPartyApp;
  let browser: Browser;
  let restoreDns: () => void;
  const watch = new PageWatch();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    clearScreenshots();
    restoreDns = resolveLocalhostSubdomains();
    [product, app, foreign, browser] = await Promise.all([startProduct(), startThirdPartyApp(), startThirdPartyApp(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await foreign?.close();
    await product?.stop();
    restoreDns?.();
  });
  // Each test answers for its own pages' problems.
  afterEach(() => expect(watch.problems.splice(0)).toEqual([]));

  it('takes a person from sign-up to an app writing into their data store', async () => {
    const alice = product.instanceUrl('alice');
    const owner = await watch.newPage(await browser.newContext({ viewport: { width: 1280, height: 800 } }));

    // Sign up on the bare cluster domain; the page sends the person to their instance.
    await owner.goto(`${product.clusterUrl}/`);
    await watch.screen(owner, 'signup');
    await owner.getByLabel('Full name').fill('Alice Example');
    await owner.getByLabel('Username (your address)').fill('alice');
    await owner.getByLabel('Email').fill('alice@example.com');
    await owner.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await owner.getByLabel('Password again').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create my data store' }).click();
    await owner.waitForURL(`${alice}/`);

    // Log in.
    await watch.screen(owner, 'login');
    await logIn(owner, 'alice', PASSWORD);
    await owner.getByRole('heading', { name: 'Files' }).waitFor();
    const session = await owner.evaluate(() => sessionStorage.getItem('pds.session'));
    expect(session).toMatch(/^ey/);

    // Upload two files, each with its own progress bar.
    const png = await owner.screenshot();
    await owner.getByLabel('Choose files to upload').setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(TEXT) },
      { name: 'photo.png', mimeType: 'image/png', buffer: png },
    ]);
    for (const name of ['notes.txt', 'photo.png']) {
      const bar = owner.getByRole('progressbar', { name: `Upload of ${name}` });
      await bar.waitFor();
      await owner.getByRole('listitem').filter({ hasText: name }).getByText('Uploaded').waitFor();
      expect(await bar.evaluate((el) => (el as HTMLProgressElement).value)).toBe(1);
    }
    await owner.getByRole('link', { name: 'photo.png' }).waitFor();
    await owner.getByRole('link', { name: 'notes.txt' }).waitFor();
    await watch.screen(owner, 'files');

    // Drag and drop uploads too.
    const dropped = await owner.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['dropped in'], 'dropped.txt', { type: 'text/plain' }));
      return transfer;
    });
    await owner.getByRole('region', { name: 'Upload files' }).dispatchEvent('drop', { dataTransfer: dropped });
    await owner.getByRole('listitem').filter({ hasText: 'dropped.txt' }).getByText('Uploaded').waitFor();
    await owner.getByRole('link', { name: 'dropped.txt' }).waitFor();

    // Preview: the image and the text.
    await owner.getByRole('link', { name: 'photo.png' }).click();
    const image = owner.getByRole('img', { name: 'Preview of photo.png' });
    await image.waitFor();
    await expect(image.evaluate((img) => (img as HTMLImageElement).naturalWidth)).resolves.toBe(1280);
    await watch.screen(owner, 'preview-image');
    await owner.getByRole('link', { name: '← All files' }).click();

    // A PDF (printed by the browser itself) previews in a frame.
    await owner
      .getByLabel('Choose files to upload')
      .setInputFiles([{ name: 'page.pdf', mimeType: 'application/pdf', buffer: await owner.pdf() }]);
    await owner.getByRole('listitem').filter({ hasText: 'page.pdf' }).getByText('Uploaded').waitFor();
    await owner.getByRole('link', { name: 'page.pdf' }).click();
    await owner.locator('iframe[title="Preview of page.pdf"]').waitFor();
    await watch.screen(owner, 'preview-pdf');
    await owner.getByRole('link', { name: '← All files' }).click();
    await owner.getByRole('link', { name: 'notes.txt' }).click();
    await expect(owner.getByLabel('Preview of notes.txt').textContent()).resolves.toBe(TEXT);
    const notesUrl = owner.url();

    // Details: title and tags, then found again by tag.
    await owner.getByLabel('Title').fill('Weekly shopping');
    await owner.getByLabel('Tags (comma-separated)').fill('home, food');
    await owner.getByRole('button', { name: 'Save details' }).click();
    await owner.getByText('Saved', { exact: true }).waitFor();
    await owner.getByRole('heading', { name: 'Weekly shopping' }).waitFor();
    await owner.getByRole('link', { name: '← All files' }).click();
    await owner.locator('summary', { hasText: 'Search' }).click();
    await owner.getByLabel('Tags (comma-separated)').fill('food');
    await owner.getByRole('button', { name: 'Search', exact: true }).click();
    await owner.getByText('1 file', { exact: true }).waitFor();
    await expect(owner.getByRole('link', { name: /\.(txt|png)$/ }).allTextContents()).resolves.toEqual(['notes.txt']);
    await watch.screen(owner, 'search');
    await owner.goto(notesUrl);
    const fileId = decodeURIComponent(notesUrl.split('/').pop() ?? '');
    expect(fileId).toBe('consolenotes.txt');

    // A second user, created by the owner; the text file is shared with them.
    await owner.getByRole('link', { name: 'Users' }).click();
    await owner.getByLabel('Username').fill('bob');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create user' }).click();
    await owner.getByRole('cell', { name: 'bob', exact: true }).waitFor();
    await watch.screen(owner, 'users');
    await owner.goto(notesUrl);
    await owner.getByLabel('Share with').selectOption({ label: 'bob' });
    await owner.getByRole('button', { name: 'Share', exact: true }).click();
    await owner.getByText('bob: details and contents').waitFor();
    await watch.screen(owner, 'file-shared');

    // Bob logs in (keyboard only, on a phone-sized screen) and sees that file alone.
    const bob = await watch.newPage(await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true }));
    await bob.goto(`${alice}/`);
    await bob.getByLabel('Username').focus();
    await bob.keyboard.type('bob');
    await bob.keyboard.press('Tab');
    await bob.keyboard.type(PASSWORD);
    await bob.keyboard.press('Enter');
    await bob.getByText('1 file', { exact: true }).waitFor();
    await expect(bob.getByRole('link', { name: /\.(txt|png)$/ }).allTextContents()).resolves.toEqual(['notes.txt']);
    await expect(bob.getByRole('link', { name: 'Users' }).count()).resolves.toBe(0);
    const overflow = await bob.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await watch.screen(bob, 'second-user-phone');
    await bob.getByRole('link', { name: 'notes.txt' }).click();
    await expect(bob.getByLabel('Preview of notes.txt').textContent()).resolves.toBe(TEXT);
    await expect(bob.getByRole('button', { name: 'Make public' }).count()).resolves.toBe(0);

    // Public: anyone may fetch the content without a token.
    await owner.getByRole('button', { name: 'Make public' }).click();
    await owner.getByRole('button', { name: 'Make private' }).waitFor();
    const anonymous = await watch.newPage(await browser.newContext());
    const content = await anonymous.goto(`${alice}/api/v2.6/files/content/${fileId}`);
    expect(content?.status()).toBe(200);
    expect(await content?.text()).toBe(TEXT);

    // A third-party app, pushed through dex, logs in with hat-js's generateHatLoginUrl.
    app.configure({ instanceUrl: alice, appId: 'notes', record: { title: 'Written by the app', rank: 1 } });
    await pushApp(product, 'alice.pds.localhost', {
      title: 'Notes',
      namespace: 'notes',
      description: 'Keeps your notes',
      logoUrl: `${app.origin}/logo.svg`,
      url: app.origin,
      authUrl: '/callback',
      category: 'app',
      setup: true,
      loginAvailable: true,
    });
    await eventually(async () => {
      const count = await owner.evaluate(async () => {
        const listing = await fetch('/api/v2.6/applications', { headers: { 'X-Auth-Token': sessionStorage.getItem('pds.session') ?? '' } });
        return ((await listing.json()) as unknown[]).length;
      });
      return count > 0 ? true : undefined;
    }, 'the app push to reach the instance');
    // The person starts at the app, in a new browser session: the instance asks them to log in first.
    const visitor = await watch.newPage(await browser.newContext({ viewport: { width: 1280, height: 800 } }));
    await visitor.goto(`${app.origin}/`);
    await visitor.getByRole('link', { name: 'Log in with your data store' }).click();
    await visitor.getByRole('heading', { name: 'Log in to continue to notes' }).waitFor();
    await watch.screen(visitor, 'hatlogin-login');
    await logIn(visitor, 'alice', PASSWORD);
    await visitor.getByRole('heading', { name: 'Notes asks to use your data' }).waitFor();
    await expect(visitor.getByRole('listitem').allTextContents()).resolves.toEqual(['read notes', 'write notes']);
    await visitor.waitForFunction(() => document.querySelector<HTMLImageElement>('img.logo')?.naturalWidth === 64);
    await watch.screen(visitor, 'hatlogin');
    await visitor.getByRole('button', { name: 'Approve Notes' }).click();
    await visitor.waitForURL(`${app.origin}/callback?token=*`);
    await visitor.locator('#saved').waitFor();
    expect(app.tokens).toHaveLength(1);
    const claims = JSON.parse(Buffer.from(app.tokens[0]?.split('.')[1] ?? '', 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'alice.pds.localhost', accessScope: 'application', application: 'notes' });

    // The owner finds the app's record in the data browser.
    await owner.goto(`${alice}/#/data`);
    await owner.getByRole('link', { name: 'items' }).click();
    await owner.getByRole('cell', { name: 'Written by the app' }).waitFor();
    await owner.getByRole('button', { name: /^Show record / }).click();
    await expect(owner.getByLabel('Record as JSON').textContent()).resolves.toContain('"title": "Written by the app"');
    await watch.screen(owner, 'data');
    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Delete record' }).click();
    await owner.getByText('Record deleted').waitFor();
    await owner.getByRole('cell', { name: 'Written by the app' }).waitFor({ state: 'detached' });

    // Data debits: the instance offers them, so the console lists them.
    await owner.getByRole('link', { name: 'Data debits' }).click();
    await owner.getByRole('heading', { name: 'Data debits' }).waitFor();
    await owner.waitForLoadState('networkidle');
    await watch.screen(owner, 'data-debits');

    // Apps: the page loaded before the app arrived shows a placeholder; a fresh load shows its logo.
    await owner.getByRole('link', { name: 'Apps' }).click();
    await owner.getByText('running').waitFor();
    await owner.waitForLoadState('networkidle');
    await owner.reload();
    await owner.waitForFunction(() => document.querySelector<HTMLImageElement>('img.logo')?.naturalWidth === 64);
    await watch.screen(owner, 'apps');
    await owner.getByRole('button', { name: 'Disable Notes' }).click();
    await owner.getByText('not set up').waitFor();
    await owner.getByRole('button', { name: 'Set up Notes' }).click();
    await owner.getByText('running').waitFor();
    await expect(owner.getByRole('link', { name: 'Open Notes' }).getAttribute('href')).resolves.toBe(app.origin);

    // Logging out ends the session in this tab.
    await owner.getByRole('button', { name: 'Log out' }).click();
    await owner.getByRole('heading', { name: 'Log in' }).waitFor();
    await expect(owner.evaluate(() => sessionStorage.getItem('pds.session'))).resolves.toBeNull();
  });

  it('has an accessibility check that finds a known fault', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.setContent('<!doctype html><html lang="en"><title>t</title><main><input type="text"><img src="data:,"></main></html>');
    const problems = await accessibilityProblems(page);
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['image-alt', 'label']);
  });

  it('keeps the session the server slides forward in X-Auth-Token', async () => {
    const alice = product.instanceUrl('alice');
    const page = await watch.newPage(await browser.newContext());
    await page.goto(`${alice}/`);
    await logIn(page, 'alice', PASSWORD);
    await page.getByRole('heading', { name: 'Files' }).waitFor();
    const first = await page.evaluate(() => sessionStorage.getItem('pds.session'));
    // A later token of the same account, as the gateway sends one after an hour, on the next answer.
    await new Promise((resolve) => setTimeout(resolve, 1100)); // tokens carry whole seconds
    const later = await page.evaluate(async (password) => {
      const login = await fetch('/users/access_token', { headers: { username: 'alice', password } });
      return ((await login.json()) as { accessToken: string }).accessToken;
    }, PASSWORD);
    expect(later).not.toBe(first);
    await page.route('**/api/v2.6/files/search*', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: '[]', headers: { 'X-Auth-Token': later } }),
    );
    await page.locator('summary', { hasText: 'Search' }).click();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await eventually(
      async () => ((await page.evaluate(() => sessionStorage.getItem('pds.session'))) === later ? true : undefined),
      'the refreshed token',
    );
  });

  it('never hands an app token to an origin other than the app’s own', async () => {
    const alice = product.instanceUrl('alice');
    const owner = await watch.newPage(await browser.newContext());
    await owner.goto(`${alice}/`);
    await logIn(owner, 'alice', PASSWORD);
    await owner.getByRole('heading', { name: 'Files' }).waitFor();

    await owner.goto(`${alice}/#/hatlogin?name=notes&redirect=${foreign.origin}/steal&fallback=${foreign.origin}/refused`);
    await owner.getByRole('heading', { name: 'Notes asks to use your data' }).waitFor();
    await owner.getByRole('alert').filter({ hasText: 'Approval is blocked' }).waitFor();
    await expect(owner.getByRole('button', { name: 'Approve Notes' }).isDisabled()).resolves.toBe(true);
    await watch.screen(owner, 'hatlogin-foreign-refused');
    await owner.getByRole('button', { name: 'Refuse' }).click();
    await owner.getByRole('heading', { name: 'Files' }).waitFor();
    expect(owner.url()).toBe(`${alice}/#/files`);
    expect(foreign.requests).toEqual([]);
    expect(foreign.tokens).toEqual([]);

    // Refusing the app's own link goes to its fallback, without a token.
    const tokensBefore = app.tokens.length;
    await owner.goto(`${alice}/#/hatlogin?name=notes&redirect=${app.origin}/callback&fallback=${app.origin}/refused`);
    await owner.getByRole('button', { name: 'Refuse' }).click();
    await owner.waitForURL(`${app.origin}/refused`);
    expect(app.tokens).toHaveLength(tokensBefore);
  });
});
