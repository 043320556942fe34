// The web console in a real browser (Debian's Chromium through playwright-core) against the product
// as `pnpm start` runs it. One owner's journey, test by test: sign up and land logged in → upload
// with progress → preview → edit details → filter → 250 more files, every one reachable page by page
// → sort, grid with thumbnails, bulk share, a zip of a selection, rename, public, delete, unfinished
// uploads → a second person on a phone sees exactly what was shared, and no thumbnail of the rest → a
// third-party app logs in through #/hatlogin with hat-js and
// writes a record → the owner reads it in the data browser. And: errors in plain words, the login
// limit's wait, a page for an address without an instance, and no app token ever sent to a foreign
// origin. Every screen is checked at desktop and phone width, light and dark, by axe-core and for
// sideways scrolling.
import { existsSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems } from './support/accessibility';
import { CHROMIUM, clearScreenshots, DESKTOP, launchBrowser, PageWatch, PHONE, screenshot } from './support/browser';
import { inParallel, uploadThroughApi, type Owner } from './support/files-api';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';
import { startThirdPartyApp, type ThirdPartyApp } from './support/third-party-app';

jest.setTimeout(180_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const TEXT = 'Shopping list\n- apples\n- bread\n';
const BULK = 250;
/** Files of the owner before the bulk ones: notes, photo, dropped, page and the profile photo. */
const FIRST = 5;
const HOLIDAY = 'holiday-at-the-seaside-with-the-whole-family-and-the-dog-summer-2026-final-version.jpg';
const bulkName = (n: number) => `bulk-${String(n).padStart(3, '0')}.txt`;

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Opens the account's menu in the top bar (Profile, Security, Your data, Log out). */
async function accountMenu(page: Page): Promise<void> {
  await page.getByRole('button', { name: /your account$/ }).click();
}

async function logOut(page: Page): Promise<void> {
  await accountMenu(page);
  await page.getByRole('button', { name: 'Log out' }).click();
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

/** The names in the file list as shown now. */
const listedNames = (page: Page) => page.locator('.file-list .file-name').allTextContents();

/** Waits for the files screen's summary line ("254 files · …") to read `text`. */
const summary = (page: Page, text: string) => page.locator('.summary').filter({ hasText: text }).waitFor();

/** The part of an element inside the window: true when at least its first 40 px are on screen. */
async function inView(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((s) => {
    const box = document.querySelector(s)?.getBoundingClientRect();
    return box !== undefined && box.top >= 0 && box.top + Math.min(box.height, 40) <= window.innerHeight;
  }, selector);
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
  /** Alice's browser tab, kept from test to test as a person keeps theirs. */
  let owner: Page;
  let alice: string;
  /** The JPEG whose thumbnail the owner sees and bob may not. */
  let holidayId: string;
  const apiOwner = async (): Promise<Owner> => ({
    instanceUrl: alice,
    token: (await owner.evaluate(() => sessionStorage.getItem('pds.session'))) ?? '',
  });

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    clearScreenshots();
    restoreDns = resolveLocalhostSubdomains();
    [product, app, foreign, browser] = await Promise.all([startProduct(), startThirdPartyApp(), startThirdPartyApp(), launchBrowser()]);
    alice = product.instanceUrl('alice');
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await foreign?.close();
    await product?.stop();
    restoreDns?.();
  });
  // Each test answers for its own pages' problems.
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('takes a new owner from sign-up into their data store, already logged in, and through their first files', async () => {
    owner = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));

    // Sign up on the bare cluster domain; the page opens the new instance, logged in.
    await owner.goto(`${product.clusterUrl}/`);
    await watch.screen(owner, 'signup');
    await owner.getByLabel('Full name').fill('Alice Example');
    await owner.getByLabel('Username (your address)').fill('alice');
    await owner.getByLabel('Email').fill('alice@example.com');
    await owner.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await owner.getByLabel('Password again').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create my data store' }).click();
    await owner.waitForURL(`${alice}/#/files`);
    await watch.see(owner.getByRole('heading', { name: 'Files' }));
    await watch.see(owner.getByText('Nothing here yet'));
    expect(await owner.evaluate(() => sessionStorage.getItem('pds.session'))).toMatch(/^ey/);
    await watch.screen(owner, 'files-empty');

    // Log out, and back in: a wrong password is named as such.
    await logOut(owner);
    watch.expect(401, '/users/access_token');
    await logIn(owner, 'alice', 'not-the-password');
    await watch.see(owner.getByText('Wrong username or password. Check both and try again.'));
    await watch.screen(owner, 'login');
    await logIn(owner, 'alice', PASSWORD);
    await watch.see(owner.getByRole('heading', { name: 'Files' }));

    // Upload two files, each with its own progress bar.
    const png = await owner.screenshot();
    await owner.getByLabel('Upload files', { exact: true }).setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(TEXT) },
      { name: 'photo.png', mimeType: 'image/png', buffer: png },
    ]);
    for (const name of ['notes.txt', 'photo.png']) {
      const bar = owner.getByRole('progressbar', { name: `Upload of ${name}` });
      await watch.see(bar);
      await watch.see(owner.getByRole('listitem').filter({ hasText: name }).getByText('Uploaded'));
      expect(await bar.evaluate((el) => (el as HTMLProgressElement).value)).toBe(1);
    }
    await watch.see(owner.getByRole('link', { name: 'photo.png' }));
    await watch.see(owner.getByRole('link', { name: 'notes.txt' }));
    await summary(owner, '2 files');
    await expect(owner.getByRole('row').filter({ hasText: 'notes.txt' }).textContent()).resolves.toContain('Only you');

    // Drag and drop uploads too.
    const dropped = await owner.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['dropped in'], 'dropped.txt', { type: 'text/plain' }));
      return transfer;
    });
    await owner.getByRole('region', { name: 'Drop files here to upload' }).dispatchEvent('drop', { dataTransfer: dropped });
    await watch.see(owner.getByRole('listitem').filter({ hasText: 'dropped.txt' }).getByText('Uploaded'));
    await watch.see(owner.getByRole('link', { name: 'dropped.txt' }));

    // Preview: the image and the text.
    await owner.getByRole('link', { name: 'photo.png' }).click();
    const image = owner.getByRole('img', { name: 'Preview of photo.png' });
    await watch.see(image);
    await expect(image.evaluate((img) => (img as HTMLImageElement).naturalWidth)).resolves.toBe(1280);
    await watch.screen(owner, 'preview-image');
    await owner.getByRole('link', { name: '← All files' }).click();

    // A PDF (printed by the browser itself) previews in a frame.
    await owner
      .getByLabel('Upload files', { exact: true })
      .setInputFiles([{ name: 'page.pdf', mimeType: 'application/pdf', buffer: await owner.pdf() }]);
    await watch.see(owner.getByRole('listitem').filter({ hasText: 'page.pdf' }).getByText('Uploaded'));
    await watch.screen(owner, 'files');
    await owner.getByRole('link', { name: 'page.pdf' }).click();
    await watch.see(owner.locator('iframe[title="Preview of page.pdf"]'));
    await watch.screen(owner, 'preview-pdf');
    await owner.getByRole('link', { name: '← All files' }).click();
    await owner.getByRole('link', { name: 'notes.txt' }).click();
    await expect(owner.getByLabel('Preview of notes.txt').textContent()).resolves.toBe(TEXT);
    const notesUrl = owner.url();
    expect(decodeURIComponent(notesUrl.split('/').pop() ?? '')).toBe('consolenotes.txt');

    // Details, edited where they are shown: title and tags; then found again by the tag.
    await owner.getByRole('button', { name: 'Edit details' }).click();
    await owner.getByLabel('Title').fill('Weekly shopping');
    await owner.getByLabel('Tags (comma-separated)').fill('home, food');
    await watch.screen(owner, 'file-edit');
    await owner.getByRole('button', { name: 'Save details' }).click();
    await watch.see(owner.getByText('Saved', { exact: true }));
    await watch.see(owner.getByRole('heading', { name: 'Weekly shopping' }));
    await owner.getByRole('link', { name: '← All files' }).click();
    await owner.getByRole('button', { name: 'Filters' }).click();
    await owner.getByLabel('Tag').selectOption('food');
    await summary(owner, '1 file match');
    await expect(listedNames(owner)).resolves.toEqual(['notes.txt']);
    await watch.screen(owner, 'files-filtered');
    await owner.getByRole('button', { name: 'Clear filters' }).click();
    await summary(owner, '4 files');

    // A second person, added by the owner; the text file is shared with them.
    await owner.getByRole('link', { name: 'Users' }).click();
    await owner.getByLabel('Username').fill('bob');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create user' }).click();
    await watch.see(owner.getByRole('button', { name: 'Disable bob' }));
    await watch.screen(owner, 'users');
    await owner.goto(notesUrl);
    await owner.getByLabel('Share with').selectOption({ label: 'bob' });
    await owner.getByRole('button', { name: 'Share', exact: true }).click();
    await watch.see(owner.getByText('bob: details and contents'));
    await watch.see(owner.getByText('Shared with bob'));
    await watch.screen(owner, 'file-shared');

    // The owner's activity log says it in a sentence, with the file's name and the person's.
    await owner.getByRole('link', { name: 'Activity' }).click();
    await watch.see(owner.getByRole('heading', { name: 'Activity' }));
    await watch.see(owner.getByText('You shared notes.txt with bob').first());
  });

  it('lets the owner publish profile fields, which anyone then reads where the HAT apps look for them', async () => {
    await accountMenu(owner);
    await owner.getByRole('link', { name: 'Profile' }).click();
    await watch.see(owner.getByRole('heading', { name: 'Profile' }));
    // The few fields people fill come first; the rest wait under More.
    const aboutYou = owner.getByRole('group', { name: 'About you' });
    await expect(aboutYou.getByRole('textbox').count()).resolves.toBe(6);
    await aboutYou.getByLabel('First name', { exact: true }).fill('Alice');
    await aboutYou.getByLabel('Last name', { exact: true }).fill('Liddell');
    await aboutYou.getByRole('checkbox', { name: 'Public First name' }).check();
    await aboutYou.getByLabel('Website', { exact: true }).fill('https://alice.example');
    await expect(owner.getByLabel('City', { exact: true }).isVisible()).resolves.toBe(false);
    await owner.getByText(/^More:/).click();
    await owner.getByLabel('City', { exact: true }).fill('Oxford');
    // The photo: a picture chosen from the computer, kept as a public file of the data store.
    await owner.getByLabel('Choose a photo').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: await owner.screenshot() });
    await watch.see(owner.getByText('Save the profile to keep it.'));
    await owner.getByRole('checkbox', { name: 'Public Photo' }).check();
    await owner.getByRole('button', { name: 'Save profile' }).click();
    await watch.see(owner.getByText('Saved. 2 fields are public.'));
    await owner.waitForFunction(() => (document.querySelector<HTMLImageElement>('.profile-photo img')?.naturalWidth ?? 0) > 0);
    await owner.getByText(/^More:/).click();
    await watch.screen(owner, 'profile');
    // Read as anyone reads it: no token sent.
    const published = await owner.evaluate(() =>
      fetch('/api/v2.6/phata/profile').then((res) => res.json() as Promise<{ profile: { data: unknown }[] }>),
    );
    expect(published.profile.map((record) => record.data)).toEqual([
      {
        personal: { firstName: 'Alice' },
        photo: { avatar: expect.stringMatching(/^http:\/\/alice\.pds\.localhost:\d+\/api\/v2\.6\/files\/content\/profileme\.png$/) },
      },
    ]);
  });

  it('downloads all of the owner’s data, and imports that archive into a new, empty data store', async () => {
    await accountMenu(owner);
    await owner.getByRole('link', { name: 'Your data' }).click();
    await watch.see(owner.getByRole('heading', { name: 'Your data' }));
    await owner.getByRole('button', { name: 'Prepare a download of all my data' }).click();
    const link = owner.getByRole('link', { name: /^Download the archive of/ });
    await link.waitFor({ timeout: 60_000 });
    await watch.screen(owner, 'your-data');
    // The bytes as the link hands them out (a fresh signed address per click).
    const { token } = await apiOwner();
    const exports = (await (await fetch(`${alice}/api/v2.6/export`, { headers: { 'X-Auth-Token': token } })).json()) as {
      downloadUrl: string;
    }[];
    const archive = Buffer.from(await (await fetch(exports[0]?.downloadUrl as string)).arrayBuffer());
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));

    const signedUp = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        fullName: 'New Home',
        username: 'newhome',
        email: 'newhome@example.com',
        pass: PASSWORD,
        passRepeat: PASSWORD,
      }),
    });
    expect(signedUp.status).toBe(201);
    const mover = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await mover.goto(`${product.instanceUrl('newhome')}/#/your-data`);
    await logIn(mover, 'newhome', PASSWORD);
    await watch.see(mover.getByRole('heading', { name: 'Your data' }));
    await mover.getByLabel('Archive (.tar.gz)').setInputFiles({ name: 'alice.tar.gz', mimeType: 'application/gzip', buffer: archive });
    // The outcome, whichever it is (a refusal's words say why).
    const outcome = mover.locator('.portability .status').filter({ hasText: /Imported|refused|wrong|not|could/ });
    await outcome.waitFor({ timeout: 60_000 });
    expect(await outcome.innerText()).toMatch(/^Imported 2 accounts, 1 bundle, \d+ files and \d+ records?\.$/);
    await watch.screen(mover, 'your-data-imported');
    await mover.getByRole('link', { name: 'Files' }).click();
    await watch.see(mover.getByRole('heading', { name: 'Files' }));
    await watch.see(mover.locator('.file-list .file-name').first());
    await mover.context().close();
  });

  it('pages through 250 more files with the total shown, sorts them, and acts on several at once', async () => {
    const api = await apiOwner();
    // Sizes 2…251 bytes: bulk-001 is the smallest file of all.
    await inParallel(
      Array.from({ length: BULK }, (_, i) => i + 1),
      6,
      (n) => uploadThroughApi(api, bulkName(n), `${'x'.repeat(n)}\n`),
    );
    await owner.goto(`${alice}/#/files`);
    await summary(owner, `${BULK + FIRST} files`);
    const pages = Math.ceil((BULK + FIRST) / 50);

    // Every file is reachable, page by page.
    const seen = new Set<string>();
    for (let page = 1; ; page++) {
      await watch.see(owner.locator('.pager-place').filter({ hasText: `page ${page} of ${pages}` }));
      if (page === 1) await watch.see(owner.locator('.pager-place').filter({ hasText: `1–50 of ${BULK + FIRST}` }));
      for (const name of await listedNames(owner)) seen.add(name);
      const next = owner.getByRole('button', { name: 'Next page' });
      if (await next.isDisabled()) break;
      await next.click();
    }
    expect(seen.size).toBe(BULK + FIRST);
    for (let n = 1; n <= BULK; n++) expect(seen.has(bulkName(n))).toBe(true);
    await watch.screen(owner, 'files-last-page');

    // Sorted by name (numbers in names in their order), by size, and back to the newest first.
    await owner.getByLabel('Sort').selectOption('name-asc');
    await watch.see(owner.locator('.pager-place').filter({ hasText: `page 1 of ${pages}` }));
    await expect(listedNames(owner).then((names) => names.slice(0, 3))).resolves.toEqual([bulkName(1), bulkName(2), bulkName(3)]);
    await owner.getByLabel('Sort').selectOption('size-desc');
    await eventually(
      async () => (['photo.png', 'page.pdf', 'me.png'].includes((await listedNames(owner))[0] ?? '') ? true : undefined),
      'the largest first',
    );
    // The grid shows a thumbnail of each image, made by the server once the upload completed (a JPEG
    // too), and each other file's type.
    // Its name is long: a card shows two lines of it and an ellipsis, the whole name in its title.
    holidayId = await uploadThroughApi(api, HOLIDAY, await owner.screenshot({ type: 'jpeg', quality: 80 }));
    await owner.reload();
    await owner.getByRole('button', { name: 'Grid' }).click();
    await watch.see(owner.locator('.file-grid .file-icon.kind-pdf'));
    for (const name of [HOLIDAY, 'photo.png']) {
      await eventually(async () => {
        await owner.reload();
        const card = owner.locator('.file-grid li').filter({ hasText: name });
        const loaded = await card
          .locator('.thumb img')
          .evaluate((img) => (img as HTMLImageElement).naturalWidth)
          .catch(() => 0);
        return loaded > 0 && loaded <= 320 ? true : undefined;
      }, `the thumbnail of ${name}`);
    }
    const holidayName = owner.locator('.file-grid .file-name').filter({ hasText: HOLIDAY });
    await expect(holidayName.getAttribute('title')).resolves.toBe(HOLIDAY);
    const lines = await holidayName.evaluate((link) => ({
      cut: link.scrollHeight > link.clientHeight,
      lines: Math.round(link.clientHeight / parseFloat(getComputedStyle(link).lineHeight)),
    }));
    expect(lines).toEqual({ cut: true, lines: 2 });
    // Every card as tall as its own content: the image cards are no taller than the others.
    const heights = await owner.locator('.file-grid li').evaluateAll((cards) => cards.map((card) => card.getBoundingClientRect().height));
    expect(Math.max(...heights) - Math.min(...heights)).toBeLessThan(30);
    await watch.screen(owner, 'files-grid', { dark: true });
    await owner.getByRole('button', { name: 'List', exact: true }).click();
    await owner.getByRole('button', { name: 'Size' }).click(); // the column header turns the order round
    await eventually(async () => ((await listedNames(owner))[0] === bulkName(1) ? true : undefined), 'the smallest first');
    await owner.getByLabel('Sort').selectOption('date-desc');

    // Three files shared with bob at once.
    await owner.getByLabel('Find files').fill('bulk-00');
    await summary(owner, '9 files match');
    for (const n of [1, 2, 3]) await owner.getByLabel(`Select ${bulkName(n)}`).check();
    await watch.see(owner.getByText('3 selected'));
    await owner.getByRole('button', { name: 'Share…' }).click();
    await owner.getByLabel('Share 3 files with').selectOption({ label: 'bob' });
    await watch.screen(owner, 'files-share');
    await owner.getByRole('button', { name: 'Share', exact: true }).click();
    await watch.see(owner.getByText('Shared 3 files with bob'));
    for (const n of [1, 2, 3])
      await watch.see(
        owner
          .getByRole('row')
          .filter({ hasText: bulkName(n) })
          .getByRole('cell', { name: 'Shared with bob' }),
      );

    // Shared lists what the owner shared: those three and the notes.
    await owner.getByRole('link', { name: 'Shared', exact: true }).click();
    await watch.see(owner.getByRole('heading', { name: 'Shared' }));
    await summary(owner, '4 files');
    expect((await listedNames(owner)).sort()).toEqual([bulkName(1), bulkName(2), bulkName(3), 'notes.txt']);
    await watch.screen(owner, 'shared');
    await owner.getByRole('link', { name: 'Files', exact: true }).click();
    // Shared has a search box too: typing before Files has replaced it would type into the screen going away.
    await watch.see(owner.getByRole('heading', { name: 'Files', exact: true }));
    await owner.getByLabel('Find files').fill('bulk-00');
    await summary(owner, '9 files match');

    // The same three as one zip, made by the server and saved by the browser (Chromium reports the
    // navigation that turned into a download as aborted).
    watch.expect(200, '/api/v2.6/files/archive/');
    for (const n of [1, 2, 3]) await owner.getByLabel(`Select ${bulkName(n)}`).check();
    const [download] = await Promise.all([owner.waitForEvent('download'), owner.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^files-\d{4}-\d{2}-\d{2}\.zip$/);
    const zip = readFileSync(await download.path());
    expect(zip.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
    for (const n of [1, 2, 3]) expect(zip.includes(bulkName(n))).toBe(true);
    expect(zip.includes(bulkName(4))).toBe(false);
    await owner.getByRole('button', { name: 'Clear selection' }).click();

    // Renamed in place: the file keeps its id.
    await owner.getByLabel(`Select ${bulkName(4)}`).check();
    await owner.getByRole('button', { name: 'Rename' }).click();
    const newName = owner.getByLabel(`New name for ${bulkName(4)}`);
    await newName.fill('renamed.txt');
    await newName.press('Enter');
    await watch.see(owner.getByText('Renamed to renamed.txt'));
    await owner.getByLabel('Find files').fill('renamed');
    await expect(owner.getByRole('link', { name: 'renamed.txt' }).getAttribute('href')).resolves.toBe('#/files/consolebulk004.txt');

    // Two made public at once: anyone may fetch them.
    await owner.getByLabel('Find files').fill('bulk-00');
    for (const n of [5, 6]) await owner.getByLabel(`Select ${bulkName(n)}`).check();
    await owner.getByRole('button', { name: 'Make public' }).click();
    await watch.see(owner.getByText('Public link on for 2 files'));
    await watch.see(
      owner
        .getByRole('row')
        .filter({ hasText: bulkName(5) })
        .getByRole('cell', { name: 'Public link' }),
    );
    const published = await fetch(`${alice}/api/v2.6/files/content/consolebulk005.txt`);
    expect(published.status).toBe(200);
    expect(await published.text()).toBe('xxxxx\n');

    // Three moved to the trash at once, without a question: the toast's Undo brings them back.
    for (const n of [7, 8, 9]) await owner.getByLabel(`Select ${bulkName(n)}`).check();
    await owner.getByRole('button', { name: 'Delete' }).click();
    await watch.see(owner.getByRole('status').filter({ hasText: 'Moved 3 files to trash' }));
    await summary(owner, '5 files match');
    await owner.getByRole('button', { name: 'Undo' }).click();
    await watch.see(owner.getByText('3 files are back'));
    await summary(owner, '8 files match');
    for (const n of [7, 8, 9]) await owner.getByLabel(`Select ${bulkName(n)}`).check();
    await owner.getByRole('button', { name: 'Delete' }).click();
    await watch.see(owner.getByRole('status').filter({ hasText: 'Moved 3 files to trash' }));
    await summary(owner, '5 files match');
    await owner.getByLabel('Find files').fill('');
    await summary(owner, `${BULK + FIRST + 1 - 3} files`);

    // They wait in the trash: one restored, one deleted for good, then the trash emptied.
    // The storage bar in the sidebar, in the binary units of the file sizes (a 1 GiB allowance).
    await watch.see(owner.locator('.sidebar .storage').getByText(/^[\d.]+ (B|KiB|MiB) of 1 GiB used$/));
    await owner.getByRole('link', { name: 'Trash' }).first().click();
    await summary(owner, '3 files');
    await watch.screen(owner, 'trash');
    await owner.getByRole('button', { name: `Restore ${bulkName(7)}` }).click();
    await watch.see(owner.getByText(`${bulkName(7)} is back in your files`));
    // What cannot be undone asks first, in place.
    await owner.getByRole('button', { name: `Delete ${bulkName(8)} for good` }).click();
    await owner.getByRole('button', { name: 'Delete for good' }).click();
    await watch.see(owner.getByText(`${bulkName(8)} deleted for good`));
    await owner.getByRole('button', { name: 'Empty the trash' }).click();
    await owner.getByRole('button', { name: 'Delete them for good' }).click();
    await watch.see(owner.getByText('The trash is empty.'));
    await owner.getByRole('link', { name: 'Back to your files' }).click();
    await summary(owner, `${BULK + FIRST + 1 - 2} files`);

    // Uploads never completed stay out of the list, in their own notice, until removed…
    await uploadThroughApi(api, 'half-a.txt', '', { complete: false });
    await uploadThroughApi(api, 'half-b.txt', '', { complete: false });
    await owner.reload();
    await watch.see(owner.getByText('2 uploads did not finish.'));
    await expect(owner.getByRole('link', { name: 'half-a.txt' }).count()).resolves.toBe(0);
    await owner.getByRole('button', { name: 'Show them' }).click();
    await watch.screen(owner, 'files-unfinished');
    await owner.getByRole('button', { name: 'Remove all 2' }).click();
    await watch.see(owner.getByText('Removed 2 files that did not finish uploading'));
    await owner.locator('#unfinished-title').waitFor({ state: 'detached' });
    // …or dismissed.
    await uploadThroughApi(api, 'half-c.txt', '', { complete: false });
    await owner.reload();
    await watch.see(owner.getByText('1 upload did not finish.'));
    await owner.getByRole('button', { name: 'Dismiss' }).click();
    await owner.locator('#unfinished-title').waitFor({ state: 'detached' });
    await owner.reload();
    await summary(owner, 'files');
    await owner.waitForLoadState('networkidle');
    await expect(owner.locator('#unfinished-title').count()).resolves.toBe(0);
  });

  it('moves a file to the trash from its page with an undo, and says on that page that it is in the trash', async () => {
    await owner.goto(`${alice}/#/files/consoledropped.txt`);
    await watch.see(owner.getByRole('heading', { name: 'dropped.txt' }));
    await owner.getByRole('button', { name: 'Delete' }).click();
    // Back to the list, where the toast offers the undo.
    await watch.see(owner.getByRole('status').filter({ hasText: 'Moved dropped.txt to trash' }));
    await watch.see(owner.getByRole('heading', { name: 'Files' }));
    expect(owner.url()).toMatch(/#\/files(\?.*)?$/);
    await screenshot(owner, 'file-deleted-desktop', true);
    await owner.getByRole('button', { name: 'Undo' }).click();
    await watch.see(owner.getByText('dropped.txt is back'));
    await owner.getByLabel('Find files').fill('dropped');
    await watch.see(owner.getByRole('link', { name: 'dropped.txt' }));

    // Deleted again, its page (an old link, a bookmark) says where it is and brings it back.
    await owner.getByRole('link', { name: 'dropped.txt' }).click();
    await owner.getByRole('button', { name: 'Delete' }).click();
    await watch.see(owner.getByRole('status').filter({ hasText: 'Moved dropped.txt to trash' }));
    await owner.goto(`${alice}/#/files/consoledropped.txt`);
    await watch.see(owner.getByText('dropped.txt is in the trash.'));
    await expect(owner.getByText('the file is not uploaded yet').count()).resolves.toBe(0);
    await watch.screen(owner, 'file-in-trash');
    await owner.getByRole('button', { name: 'Restore' }).click();
    await watch.see(owner.getByText('Restored: it is back in your files'));
    await watch.see(owner.getByRole('heading', { name: 'Preview' }));
  });

  it('shows a second person, on a phone, exactly the files shared with them', async () => {
    const bob = await watch.newPage(await browser.newContext({ viewport: PHONE, isMobile: true }));
    await bob.goto(`${alice}/`);
    // Keyboard only.
    await bob.getByLabel('Username').focus();
    await bob.keyboard.type('bob');
    await bob.keyboard.press('Tab');
    await bob.keyboard.type(PASSWORD);
    await bob.keyboard.press('Enter');
    await summary(bob, '4 files');
    expect((await listedNames(bob)).sort()).toEqual([bulkName(1), bulkName(2), bulkName(3), 'notes.txt']);
    // The header takes one line, not a stack of links.
    await expect(bob.locator('header.bar').evaluate((header) => header.getBoundingClientRect().height)).resolves.toBeLessThan(64);
    await watch.screen(bob, 'files-shared-with-me');
    await bob.getByRole('button', { name: 'Menu' }).click();
    // A user has the files shared with them, and their own account's security (password, log out
    // everywhere) under its menu: nothing of the owner's.
    await expect(bob.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).resolves.toEqual([
      'Shared with you',
      'Photos',
    ]);
    await watch.screen(bob, 'menu');
    await bob.getByRole('button', { name: 'Menu' }).click();
    await accountMenu(bob);
    await expect(bob.locator('#account-menu').getByRole('link').allTextContents()).resolves.toEqual(['Security']);
    await watch.see(bob.getByRole('button', { name: 'Log out' }));
    await accountMenu(bob);
    await bob.getByRole('link', { name: 'notes.txt' }).click();
    await expect(bob.getByLabel('Preview of notes.txt').textContent()).resolves.toBe(TEXT);
    await expect(bob.getByRole('button', { name: 'Make public' }).count()).resolves.toBe(0);
    // The thumbnail of a photo nobody shared with him is refused, as the photo itself is; the owner gets it.
    const thumbnail = `${alice}/api/v2.6/files/thumbnail/${encodeURIComponent(holidayId)}`;
    const bobToken = (await bob.evaluate(() => sessionStorage.getItem('pds.session'))) ?? '';
    const refused = await fetch(thumbnail, { headers: { 'X-Auth-Token': bobToken }, redirect: 'manual' });
    expect(refused.status).toBe(404);
    const given = await fetch(thumbnail, { headers: { 'X-Auth-Token': (await apiOwner()).token }, redirect: 'manual' });
    expect(given.status).toBe(303);
  });

  it('lets a third-party app in through #/hatlogin, and shows the owner what it wrote', async () => {
    // Public: anyone may fetch the content without a token.
    await owner.goto(`${alice}/#/files/consolenotes.txt`);
    await owner.getByRole('button', { name: 'Make public' }).click();
    await watch.see(owner.getByRole('button', { name: 'Make private' }));
    const anonymous = await watch.newPage(await browser.newContext());
    const content = await anonymous.goto(`${alice}/api/v2.6/files/content/consolenotes.txt`);
    expect(content?.status()).toBe(200);
    expect(await content?.text()).toBe(TEXT);

    // Two apps pushed through dex; the second one's logo fails to load.
    app.configure({ instanceUrl: alice, appId: 'notes', record: { title: 'Written by the app', rank: 1 } });
    const appRecord = { url: app.origin, authUrl: '/callback', category: 'app', setup: true, loginAvailable: true };
    await pushApp(product, 'alice.pds.localhost', {
      ...appRecord,
      title: 'Notes',
      namespace: 'notes',
      description: 'Keeps your notes',
      logoUrl: `${app.origin}/logo.svg`,
    });
    await pushApp(product, 'alice.pds.localhost', {
      ...appRecord,
      title: 'Diary',
      namespace: 'diary',
      description: 'A line a day, kept in your own data store',
      logoUrl: `${app.origin}/missing-logo.svg`,
    });
    await eventually(async () => {
      const count = await owner.evaluate(async () => {
        const listing = await fetch('/api/v2.6/applications', { headers: { 'X-Auth-Token': sessionStorage.getItem('pds.session') ?? '' } });
        return ((await listing.json()) as unknown[]).length;
      });
      return count === 2 ? true : undefined;
    }, 'the app pushes to reach the instance');

    // The person starts at the app, in a new browser session: the instance asks them to log in first.
    const visitor = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await visitor.goto(`${app.origin}/`);
    await visitor.getByRole('link', { name: 'Log in with your data store' }).click();
    await watch.see(visitor.getByRole('heading', { name: 'Log in to continue to notes' }));
    await watch.screen(visitor, 'hatlogin-login');
    await logIn(visitor, 'alice', PASSWORD);
    await watch.see(visitor.getByRole('heading', { name: 'Notes asks to use your data' }));
    await expect(visitor.getByRole('listitem').allTextContents()).resolves.toEqual(['read notes', 'write notes']);
    await visitor.waitForFunction(() => document.querySelector<HTMLImageElement>('img.logo')?.naturalWidth === 64);
    await watch.screen(visitor, 'hatlogin');
    await visitor.getByRole('button', { name: 'Approve Notes' }).click();
    await visitor.waitForURL(`${app.origin}/callback?token=*`);
    await watch.see(visitor.locator('#saved'));
    expect(app.tokens).toHaveLength(1);
    const claims = JSON.parse(Buffer.from(app.tokens[0]?.split('.')[1] ?? '', 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'alice.pds.localhost', accessScope: 'application', application: 'notes' });

    // The owner finds the app's record among 31, with the total, and its JSON in a panel in view.
    const api = await apiOwner();
    const notes = Array.from({ length: 30 }, (_, i) => ({ title: `Note ${i + 1}`, rank: i + 2 }));
    const written = await fetch(`${alice}/api/v2.6/data/notes/items`, {
      method: 'POST',
      headers: { 'X-Auth-Token': api.token, 'Content-Type': 'application/json' },
      body: JSON.stringify(notes),
    });
    expect(written.status).toBe(201);
    await owner.goto(`${alice}/#/data`);
    // Each app's data in its own words: its title and what it says it keeps.
    await watch.see(owner.getByRole('heading', { name: 'Notes' }));
    await watch.see(owner.getByText('Keeps your notes'));
    await owner.getByRole('link', { name: 'Notes: Items' }).click();
    await watch.see(owner.locator('.summary').filter({ hasText: '31 records' }));
    await watch.see(owner.locator('.pager-place').filter({ hasText: '1–20 of 31' }));
    await watch.see(owner.getByRole('cell', { name: 'Written by the app' }));
    await owner
      .getByRole('button', { name: /^Show record / })
      .first()
      .click();
    await expect(owner.getByLabel('Record as JSON').textContent()).resolves.toContain('"title": "Written by the app"');
    expect(await inView(owner, '.side-panel pre')).toBe(true);
    await watch.screen(owner, 'records');
    // On a phone the panel opens over the bottom of the screen, also in view.
    await owner.setViewportSize(PHONE);
    await owner.getByRole('button', { name: 'Close' }).click();
    await owner
      .getByRole('button', { name: /^Show record / })
      .nth(15)
      .click();
    await expect(owner.getByLabel('Record as JSON').textContent()).resolves.toContain('"title": "Note 15"');
    expect(await inView(owner, '.side-panel pre')).toBe(true);
    await owner.setViewportSize(DESKTOP);
    await owner.getByRole('button', { name: 'Delete record' }).click();
    await owner.getByRole('button', { name: 'Delete it' }).click();
    await watch.see(owner.getByText('Record deleted'));
    await watch.see(owner.locator('.summary').filter({ hasText: '30 records' }));
    await owner.getByRole('link', { name: '← All data' }).click();
    await watch.screen(owner, 'data');

    // Data debits: no tab while there are none; there once the owner accepted one.
    await expect(owner.getByRole('link', { name: 'Data debits' }).count()).resolves.toBe(0);
    const debit = {
      purpose: 'Reading my notes',
      start: new Date().toISOString(),
      period: 3600,
      termsUrl: `${app.origin}/terms`,
      requestClientName: 'Reader',
      requestClientUrl: app.origin,
      requestClientLogoUrl: `${app.origin}/logo.svg`,
      bundle: { name: 'reader-notes', bundle: { notes: { endpoints: [{ endpoint: 'notes/items' }] } } },
    };
    const headers = { 'X-Auth-Token': api.token, 'Content-Type': 'application/json' };
    const offered = await fetch(`${alice}/api/v2.6/data-debit/reader`, { method: 'POST', headers, body: JSON.stringify(debit) });
    expect(offered.status).toBe(201);
    expect((await fetch(`${alice}/api/v2.6/data-debit/reader/enable`, { headers })).status).toBe(200);
    await owner.reload();
    await owner.getByRole('link', { name: 'Data debits' }).click();
    await owner.getByRole('button', { name: 'Reader' }).click();
    await watch.see(owner.getByText('Reading my notes', { exact: true }));
    await owner.getByText('Everything, as JSON').click();
    await watch.see(owner.getByLabel('Data debit as JSON'));
    await watch.screen(owner, 'data-debits');

    // Apps: a logo that fails shows the app's letter; the status words follow what the owner did.
    watch.expect(404, '/missing-logo.svg');
    await owner.getByRole('link', { name: 'Apps' }).click();
    await owner.waitForFunction(() => document.querySelector<HTMLImageElement>('img.logo')?.naturalWidth === 64);
    await watch.see(owner.locator('.card').filter({ hasText: 'Diary' }).locator('.logo.letter').filter({ hasText: 'D' }));
    await watch.see(owner.locator('.card').filter({ hasText: 'Diary' }).getByText('Not set up'));
    await watch.screen(owner, 'apps', { dark: true });
    await owner.getByRole('button', { name: 'Disable Notes' }).click();
    await watch.see(owner.locator('.card').filter({ hasText: 'Notes' }).getByText('Disabled', { exact: true }));
    await owner.getByRole('button', { name: 'Enable Notes' }).click();
    await watch.see(owner.locator('.card').filter({ hasText: 'Notes' }).getByText('Running'));
    await expect(owner.getByRole('link', { name: 'Open Notes' }).getAttribute('href')).resolves.toBe(app.origin);

    // Logging out ends the session in this tab.
    await logOut(owner);
    await watch.see(owner.getByRole('heading', { name: 'Log in' }));
    await expect(owner.evaluate(() => sessionStorage.getItem('pds.session'))).resolves.toBeNull();
  });

  it('tells the owner in sentences what their apps and people did, by day, and filters by app', async () => {
    // The apps screen, where the owner logged out, shows the Diary app's missing logo again.
    watch.expect(404, '/missing-logo.svg');
    // The app reads its records twice, with the token it was given.
    for (let i = 0; i < 2; i++) {
      const read = await fetch(`${alice}/api/v2.6/data/notes/items?take=5`, { headers: { 'X-Auth-Token': app.tokens[0] as string } });
      expect(read.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 1500)); // reads are written once a second
    await logIn(owner, 'alice', PASSWORD);
    await owner.getByRole('link', { name: 'Activity' }).click();
    await watch.see(owner.getByRole('heading', { name: 'Today' }));
    await watch.see(owner.getByText(/^Notes app read (10|5) records of your notes \(items\)(, 2 times)?$/));
    await watch.see(owner.getByText('Notes app added a record to your notes (items)'));
    // One time per line, and no id anywhere.
    await expect(owner.locator('.activity li time').first().textContent()).resolves.toMatch(/^\d{1,2}:\d{2}/);
    expect(await owner.locator('.activity').textContent()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    await watch.screen(owner, 'activity', { dark: true });
    // A hundred entries at a time; earlier ones on asking.
    const before = await owner.locator('.activity li').count();
    await owner.getByRole('button', { name: 'Show earlier activity' }).click();
    await eventually(async () => ((await owner.locator('.activity li').count()) > before ? true : undefined), 'earlier activity');
    await owner.getByLabel('What').selectOption({ label: 'Failed log-ins' });
    await watch.see(owner.getByText(/^Someone tried to log in as alice with a wrong password/).first());
    await owner.getByLabel('What').selectOption({ label: 'Everything' });
    await owner.getByLabel('Who').selectOption({ label: 'Notes (app)' });
    await eventually(async () => {
      const lines = await owner.locator('.activity li .row-text').allTextContents();
      return lines.length > 0 && lines.every((line) => line.startsWith('Notes app')) ? true : undefined;
    }, 'only the Notes app’s lines');
  });

  it('leaves no dead end: an unknown app’s login, an ended session, field names, sign-up and log-in', async () => {
    watch.expect(404, '/missing-logo.svg');
    // An app link naming an app this data store does not know: plain words and a way on.
    await owner.goto(`${alice}/#/hatlogin?name=nosuch&redirect=${app.origin}/callback`);
    watch.expect(404, '/api/v2.6/applications/nosuch');
    await watch.see(owner.getByRole('heading', { name: 'No app called “nosuch” here' }));
    await watch.screen(owner, 'hatlogin-unknown');
    await owner.getByRole('link', { name: 'See your apps' }).click();
    await watch.see(owner.getByRole('heading', { name: 'Apps' }));

    // A rule the server names by its field is said in people's words.
    await owner.getByRole('link', { name: 'Users' }).click();
    await owner.getByLabel('Username').fill('carl');
    await owner.getByLabel('Password').fill('short');
    watch.expect(400, '/users/user');
    await owner.getByRole('button', { name: 'Create user' }).click();
    await watch.see(owner.getByText(/^The password must be 8 to 256 characters/));

    // A tab whose session the server ended elsewhere (here: log out everywhere) says why it is at the login.
    const other = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await other.goto(`${alice}/`);
    await logIn(other, 'alice', PASSWORD);
    await watch.see(other.getByRole('heading', { name: 'Files' }));
    // Expected before the session ends: on a loaded machine the Files screen's own reads may still be on
    // their way, and meet the ended session first.
    watch.expect(401, alice);
    await owner.evaluate(() =>
      fetch('/api/v2.6/auth/logout-everywhere', {
        method: 'POST',
        headers: { 'X-Auth-Token': sessionStorage.getItem('pds.session') ?? '' },
      }),
    );
    // The tab's next request meets the ended session. On a loaded machine a request of its own may already
    // have met it and taken the tab to the login (its Photos link gone): the address leads on from either.
    await other.evaluate(() => {
      location.hash = '#/photos';
    });
    await watch.see(other.getByText(/^You were logged out: your session ended/));
    await watch.screen(other, 'login-session-ended');

    // The log-in page leads to sign-up, and sign-up to the log-in of a data store one has.
    await expect(other.getByRole('link', { name: 'Create a data store of your own' }).getAttribute('href')).resolves.toBe(
      `${product.clusterUrl}/`,
    );
    await other.getByRole('link', { name: 'Create a data store of your own' }).click();
    await watch.see(other.getByRole('heading', { name: 'Create your personal data store' }));
    await other.getByPlaceholder('name').fill('alice');
    await other.getByRole('button', { name: 'Log in' }).click();
    await other.waitForURL(`${alice}/`);
    await watch.see(other.getByRole('heading', { name: 'Log in' }));
    await other.context().close();
    await owner.reload();
    await logIn(owner, 'alice', PASSWORD);
    await watch.see(owner.getByRole('heading', { name: 'Users' }));
  });

  it('says in plain words that a name is taken, and offers another', async () => {
    const page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await page.goto(`${product.clusterUrl}/`);
    await page.getByLabel('Full name').fill('Alice Example');
    await page.getByLabel('Username (your address)').fill('alice');
    await page.getByLabel('Email').fill('alice@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    // Two passwords that differ are caught before anything is sent.
    await page.getByLabel('Password again').fill(`${PASSWORD}!`);
    await page.getByRole('button', { name: 'Create my data store' }).click();
    await watch.see(page.getByText('The two passwords differ.'));
    await page.getByLabel('Password again').fill(PASSWORD);
    // The name is checked before the sign-up is sent (a check is not counted as a sign-up).
    const signups: string[] = [];
    page.on('request', (request) => request.url().endsWith('/api/signup') && signups.push(request.url()));
    await page.getByRole('button', { name: 'Create my data store' }).click();
    await watch.see(page.getByText('alice.pds.localhost is taken.'));
    expect(signups).toEqual([]);
    await watch.screen(page, 'signup-taken');
    await page.getByRole('button', { name: 'Use alice-example instead' }).click();
    await expect(page.getByLabel('Username (your address)').inputValue()).resolves.toBe('alice-example');
  });

  it('tells a person how long to wait after too many login attempts', async () => {
    const signedUp = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fullName: 'Carol', username: 'carol', email: 'carol@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    });
    expect(signedUp.status).toBe(201);
    const page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    watch.expect(401, '/users/access_token');
    watch.expect(429, '/users/access_token');
    await page.goto(`${product.instanceUrl('carol')}/`);
    await page.getByLabel('Username').fill('carol');
    const attempt = async () => {
      const answered = page.waitForResponse((response) => response.url().includes('/users/access_token'));
      await page.getByLabel('Password').fill('a-wrong-guess');
      await page.getByRole('button', { name: 'Log in' }).click();
      return (await answered).status();
    };
    let status = await attempt();
    for (let tries = 1; status === 401 && tries < 20; tries++) status = await attempt();
    expect(status).toBe(429);
    await watch.see(page.getByText(/^Too many attempts\. For your safety, logging in is paused: try again in \d+ (seconds|minute)\.$/));
    await expect(page.getByRole('button', { name: 'Log in' }).isDisabled()).resolves.toBe(true);
    await watch.screen(page, 'login-too-many');
  });

  it('lets an owner close their instance after a clear warning, shows the date of the erasure, and cancels', async () => {
    const signedUp = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fullName: 'Dora', username: 'dora', email: 'dora@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    });
    expect(signedUp.status).toBe(201);
    const page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await page.goto(`${product.instanceUrl('dora')}/#/profile`);
    await logIn(page, 'dora', PASSWORD);
    await page.getByRole('link', { name: 'Close this instance and erase everything in it' }).click();
    await watch.see(page.getByRole('heading', { name: 'Close your instance' }));
    await watch.see(page.getByText('can never be used again'));
    const close = page.getByRole('button', { name: 'Close my instance' });
    await page.getByLabel('Your password').fill('not-the-password');
    // Nothing is sent before the box is ticked.
    await expect(close.isDisabled()).resolves.toBe(true);
    await page.getByLabel(/I understand that all my data will be erased/).check();
    await watch.screen(page, 'close-instance');
    watch.expect(403, '/api/v2.6/instance/close');
    await close.click();
    await watch.see(page.getByText('That password is not right. Nothing was closed.'));

    await page.getByLabel('Your password').fill(PASSWORD);
    await close.click();
    await watch.see(page.getByRole('heading', { name: 'Your instance is closing' }));
    // The date shown is the server's, a week from now.
    const token = (await page.evaluate(() => sessionStorage.getItem('pds.session'))) ?? '';
    const state = (await (
      await fetch(`${product.instanceUrl('dora')}/api/v2.6/instance/close`, { headers: { 'X-Auth-Token': token } })
    ).json()) as {
      closeAfter: string;
    };
    expect(Date.parse(state.closeAfter) - Date.now()).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);
    const shown = await page.evaluate(
      (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'short' }),
      state.closeAfter,
    );
    await watch.see(page.getByText(shown));
    // The data can still be taken out before the erasure.
    await watch.see(page.getByRole('button', { name: 'Prepare a download of all my data' }));
    await watch.screen(page, 'closing');
    // Nothing else answers any more, and the console shows the closing screen again after a reload.
    expect(
      (await fetch(`${product.instanceUrl('dora')}/api/v2.6/files/search`, { method: 'POST', headers: { 'X-Auth-Token': token } })).status,
    ).toBe(410);
    await page.reload();
    await page.getByRole('button', { name: 'Cancel closing, keep my instance' }).click();
    await watch.see(page.getByRole('heading', { name: 'Files' }));
  });

  it('shows a browser at an address without an instance a page that leads to sign-up', async () => {
    const nobody = product.instanceUrl('nobody');
    const page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    watch.expect(404, nobody);
    await page.goto(`${nobody}/`);
    await watch.see(page.getByRole('heading', { name: 'No data store here' }));
    await watch.see(page.getByText('nobody.pds.localhost', { exact: true }));
    await expect(page.getByRole('link', { name: 'Create a data store' }).getAttribute('href')).resolves.toBe(`${product.clusterUrl}/`);
    await watch.screen(page, 'unknown-instance');
  });

  it('has an accessibility check that finds a known fault', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.setContent('<!doctype html><html lang="en"><title>t</title><main><input type="text"><img src="data:,"></main></html>');
    const problems = await accessibilityProblems(page);
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['image-alt', 'label']);
  });

  it('keeps the session the server slides forward in X-Auth-Token', async () => {
    const page = await watch.newPage(await browser.newContext());
    await page.goto(`${alice}/`);
    await logIn(page, 'alice', PASSWORD);
    await watch.see(page.getByRole('heading', { name: 'Files' }));
    const first = await page.evaluate(() => sessionStorage.getItem('pds.session'));
    // A later token of the same account, as the gateway sends one after an hour, on the next answer.
    await new Promise((resolve) => setTimeout(resolve, 1100)); // tokens carry whole seconds
    const later = await page.evaluate(async (password) => {
      const login = await fetch('/users/access_token', { headers: { username: 'alice', password } });
      return ((await login.json()) as { accessToken: string }).accessToken;
    }, PASSWORD);
    expect(later).not.toBe(first);
    await page.route('**/api/v2.6/files/listing*', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: '{"files":[],"total":0,"totalBytes":0}',
        headers: { 'X-Auth-Token': later },
      }),
    );
    // Opening the files screen again reads them again.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('link', { name: 'Files' }).click();
    await eventually(
      async () => ((await page.evaluate(() => sessionStorage.getItem('pds.session'))) === later ? true : undefined),
      'the refreshed token',
    );
  });

  it('never hands an app token to an origin other than the app’s own', async () => {
    const page = await watch.newPage(await browser.newContext());
    await page.goto(`${alice}/`);
    await logIn(page, 'alice', PASSWORD);
    await watch.see(page.getByRole('heading', { name: 'Files' }));

    await page.goto(`${alice}/#/hatlogin?name=notes&redirect=${foreign.origin}/steal&fallback=${foreign.origin}/refused`);
    await watch.see(page.getByRole('heading', { name: 'Notes asks to use your data' }));
    await watch.see(page.getByRole('alert').filter({ hasText: 'Approval is blocked' }));
    await expect(page.getByRole('button', { name: 'Approve Notes' }).isDisabled()).resolves.toBe(true);
    await watch.screen(page, 'hatlogin-foreign-refused');
    await page.getByRole('button', { name: 'Refuse' }).click();
    await watch.see(page.getByRole('heading', { name: 'Files' }));
    expect(page.url()).toBe(`${alice}/#/files`);
    expect(foreign.requests).toEqual([]);
    expect(foreign.tokens).toEqual([]);

    // Refusing the app's own link goes to its fallback, without a token.
    const tokensBefore = app.tokens.length;
    await page.goto(`${alice}/#/hatlogin?name=notes&redirect=${app.origin}/callback&fallback=${app.origin}/refused`);
    await page.getByRole('button', { name: 'Refuse' }).click();
    await page.waitForURL(`${app.origin}/refused`);
    expect(app.tokens).toHaveLength(tokensBefore);
  });
});
