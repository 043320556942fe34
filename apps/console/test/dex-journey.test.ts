// Dex's administrators' console in Chromium against the product as `pnpm start` runs it (issue 36), with a
// second cluster whose gateway the test runs, and stops. An administrator given a console password by
// `pnpm dex admin password` logs in, previews and pushes an update of an app to two of the three instances
// of the cluster (they list the new version, the third does not); a push to an instance whose gateway is
// down shows failed with the reason, and the administrator's retry delivers it once the gateway is back;
// the instances with their keys' fingerprints are listed; every action is in the audit with the
// administrator, and downloads as JSON lines. The console refuses instance owners' tokens, app tokens and
// anonymous callers. Every screen is checked at desktop and phone width, light and dark.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { listen } from '@pds/runtime';
import { freePort } from '../../../scripts/lib/ports';
import { signUp as signUpOn, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { DESKTOP, PageWatch } from './support/browser';
import { dexCli, eventually, signUp, startJourney, type Journey } from './support/journey';
import { CLUSTER, type Product } from './support/product';

jest.setTimeout(240_000);

const CONSOLE_PASSWORD = 'a quiet harbour before the storm';
const OTHER_CLUSTER = 'pds.test';
const ADMIN = `admin.${CLUSTER}`;

const journal = (title: string) => ({
  title,
  namespace: 'journal',
  description: 'A diary',
  logoUrl: 'https://journal.example/logo.png',
  url: 'https://journal.example',
  authUrl: '/auth',
  browser: false,
  category: 'app',
  setup: true,
  loginAvailable: true,
});

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

describeBrowser("dex's administrators' console in Chromium", () => {
  let journey: Journey | undefined;
  let product: Product;
  let browser: Browser;
  let page: Page;
  /** The second cluster's gateway (pds.test), served on `otherPort` while it is up. */
  let other: TestGateway | undefined;
  let otherPort: number;
  let otherServer: Server | undefined;
  let carol: SignedUp;
  const tokens: Record<string, string> = {};
  let adminAppToken: string;
  const watch = new PageWatch();
  const [alice, bob] = ['alice', 'bob'].map((name) => `${name}.${CLUSTER}`) as [string, string];

  const startOther = async () => {
    otherServer = await listen(other!.app, otherPort, '127.0.0.1');
  };
  /** Down as a client sees it: no new connection, and the kept-alive ones closed too. */
  const stopOther = async () => {
    const server = otherServer;
    otherServer = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  const appOn = async (name: string) => {
    const res = await fetch(`${product.instanceUrl(name)}/api/v2.6/applications/journal`, { headers: { 'X-Auth-Token': tokens[name]! } });
    return res.status === 200
      ? ((await res.json()) as { application: { info: { name: string; version: string } } }).application.info
      : undefined;
  };

  beforeAll(async () => {
    otherPort = await freePort();
    journey = await startJourney({ DEX_CLUSTERS: `${CLUSTER},${OTHER_CLUSTER}` }, { [OTHER_CLUSTER]: `http://127.0.0.1:${otherPort}` });
    ({ product, browser } = journey);
    other = await startTestGateway({ DEX_URL: product.dexUrl });
    await startOther();
    carol = await signUpOn(other.app, 'carol');
    const registered = await fetch(`${product.dexUrl}/api/users/registerHat`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ hatAddress: carol.address }),
    });
    expect(registered.status).toBe(200);
    tokens.alice = await signUp(product, 'alice');
    tokens.bob = await signUp(product, 'bob');
    const login = await fetch(`${product.instanceUrl('admin')}/users/access_token`, {
      headers: { username: 'admin', password: product.adminPassword },
    });
    tokens.admin = ((await login.json()) as { accessToken: string }).accessToken;
    await eventually(async () => {
      const res = await fetch(`${product.dexUrl}/api/admin/instances`, { headers: { 'X-Auth-Token': tokens.admin! } });
      if (res.status !== 200) return undefined;
      const { instances } = (await res.json()) as { instances: { address: string; state: string }[] };
      return [ADMIN, alice, bob].every((a) => instances.some((i) => i.address === a && i.state === 'registered')) ? true : undefined;
    }, 'the instances to be registered with dex');
    // Version 1 of the app, certified the way scripts do it: every instance of the cluster gets it.
    const certified = await fetch(`${product.dexUrl}/api/users/update-application?hatFilter=*&cluster=${CLUSTER}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': tokens.admin },
      body: JSON.stringify(journal('Journal')),
    });
    expect(certified.status).toBe(202);
    await eventually(async () => ((await appOn('admin')) ? true : undefined), 'version 1 on the admin instance');
    // The administrator's instance has the app set up: its token is an app token of an administrator instance.
    const owner = { 'X-Auth-Token': tokens.admin };
    expect((await fetch(`${product.instanceUrl('admin')}/api/v2.6/applications/journal/setup`, { headers: owner })).status).toBe(200);
    const appToken = await fetch(`${product.instanceUrl('admin')}/api/v2.6/applications/journal/access-token`, { headers: owner });
    adminAppToken = ((await appToken.json()) as { accessToken: string }).accessToken;
    expect(await dexCli(product, ['admin', 'password', ADMIN], `${CONSOLE_PASSWORD}\n`)).toContain(`console password of ${ADMIN} set`);
  });
  afterAll(async () => {
    await stopOther();
    await other?.close();
    await journey?.stop();
  });
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('logs an administrator in with the console password the dex CLI set, and lists the certified apps', async () => {
    page = await watch.newPage(await browser.newContext({ viewport: DESKTOP, acceptDownloads: true }));
    await page.goto(`${product.dexUrl}/`);
    await watch.see(page.getByRole('heading', { name: 'Dex console' }));
    await watch.screen(page, 'dex-login');
    watch.expect(401, '/api/admin/session');
    await page.getByLabel('Administrator instance').fill(ADMIN);
    await page.getByLabel('Password').fill('not the password, surely');
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await watch.see(page.getByText('Wrong address or password'));
    await page.getByLabel('Password').fill(CONSOLE_PASSWORD);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await watch.see(page.getByRole('heading', { name: 'Apps' }));
    // The session is a cookie the page's scripts cannot read.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const row = page.getByRole('row').filter({ hasText: 'Journal' });
    await watch.see(row.getByText(ADMIN));
    await watch.screen(page, 'dex-apps');
  });

  it('previews an update, then pushes it to two of the three instances of the cluster, which list it', async () => {
    await page.getByRole('link', { name: 'Journal' }).click();
    await watch.see(page.getByRole('heading', { name: 'Journal' }));
    await watch.see(page.getByRole('button', { name: 'Hide who received it' }));
    await watch.see(page.getByText('3 of 3 delivered'));
    const record = page.getByLabel('The app record (JSON)');
    await record.fill((await record.inputValue()).replace('"title": "Journal"', '"title": "Journal 2"'));
    await page.getByLabel('Cluster', { exact: true }).selectOption(CLUSTER);
    await page.getByLabel('Only the instances I choose').check();
    for (const address of [alice, bob]) await page.getByLabel(address, { exact: true }).check();
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const preview = page.getByRole('region', { name: 'Preview: 2 instances would receive version 2' });
    await watch.see(preview);
    expect(await preview.getByRole('listitem').allTextContents()).toEqual([alice, bob]);
    await watch.screen(page, 'dex-push', { dark: true });

    await page.getByRole('button', { name: 'Push to 2 instances' }).click();
    await watch.see(page.getByText('Version 2 is on its way to 2 instances.'));
    const pushes = page.getByRole('list', { name: 'Pushes of version 2' });
    await watch.see(page.getByText('2 of 2 delivered'));
    expect(await pushes.getByRole('listitem').count()).toBe(2);
    expect(await appOn('alice')).toMatchObject({ name: 'Journal 2', version: '2.0.0' });
    expect(await appOn('bob')).toMatchObject({ name: 'Journal 2', version: '2.0.0' });
    expect(await appOn('admin')).toMatchObject({ name: 'Journal', version: '1.0.0' });
  });

  it('shows a push to an instance whose gateway is down as failed with the reason; a retry delivers it once it is back', async () => {
    await stopOther();
    const record = page.getByLabel('The app record (JSON)');
    await record.fill((await record.inputValue()).replace('"title": "Journal 2"', '"title": "Journal 3"'));
    await page.getByLabel('Cluster', { exact: true }).selectOption(OTHER_CLUSTER);
    await page.getByLabel('Every registered instance of the cluster').check();
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    await watch.see(page.getByRole('region', { name: 'Preview: 1 instance would receive version 3' }).getByText(carol.address));
    await page.getByRole('button', { name: 'Push to 1 instance' }).click();

    const push = page.getByRole('list', { name: 'Pushes of version 3' }).getByRole('listitem').filter({ hasText: carol.address });
    await watch.see(push.getByText('Failed, trying again'));
    await watch.see(push.getByText(/^Why: .*ECONNREFUSED/));
    // Its own retries wait 1, 2, then 4 s; after the fourth attempt the next is 8 s away, time enough for
    // the administrator's retry to be the one that delivers it.
    // (Failed again, not being tried: an attempt under way could still reach the gateway once it is back.)
    await push.filter({ hasText: 'tried 4 times' }).filter({ hasText: 'Failed, trying again' }).waitFor({ timeout: 30_000 });
    await watch.screen(page, 'dex-push-failed');

    await startOther();
    await push.getByRole('button', { name: 'Retry' }).click();
    await watch.see(page.getByText(`${carol.address} is being sent version 3 again.`));
    await watch.see(push.getByText('Delivered', { exact: true }));
    // Five attempts, or more when starting the gateway again outlasted the next backoff on a loaded machine.
    await watch.see(push.getByText(/tried ([5-9]|\d\d) times, retried by an administrator 1 time/));
    await watch.see(page.getByText('1 of 1 delivered'));
    const listed = await request(other!.app)
      .get('/api/v2.6/applications/journal')
      .set('Host', carol.address)
      .set('X-Auth-Token', carol.token);
    expect(listed.body.application.info).toMatchObject({ name: 'Journal 3', version: '3.0.0' });
  });

  it('lists the certified clusters and the instances with their keys’ fingerprints', async () => {
    await page.getByRole('link', { name: 'Clusters and instances' }).click();
    await watch.see(page.getByRole('heading', { name: 'Clusters and instances' }));
    await watch.see(page.getByRole('listitem').filter({ hasText: CLUSTER }).getByText('3 registered'));
    await page.getByLabel('Find by address').fill('carol');
    const row = page.getByRole('row').filter({ hasText: carol.address });
    await watch.see(row.getByText('Registered'));
    const fingerprint = await row.locator('code.fingerprint').textContent();
    const instances = (await (await page.request.get(`${product.dexUrl}/api/admin/instances`)).json()) as {
      instances: { address: string; fingerprint: string }[];
    };
    expect(fingerprint).toBe(instances.instances.find((i) => i.address === carol.address)?.fingerprint);
    await page.getByLabel('Find by address').fill('');
    await watch.screen(page, 'dex-instances', { dark: true });
  });

  it('shows every action in the audit with the administrator who did it, and downloads it as JSON lines', async () => {
    await page.getByRole('link', { name: 'Audit' }).click();
    await watch.see(page.getByRole('heading', { name: 'Audit' }));
    for (const action of ['Retry push', 'Push', 'Preview', 'Log in', 'Update application']) {
      await watch.see(
        page
          .getByRole('listitem')
          .filter({ hasText: action })
          .filter({ hasText: `${ADMIN} from` })
          .first(),
      );
    }
    await watch.screen(page, 'dex-audit');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download as JSON lines' }).click(),
    ]);
    const entries = readFileSync((await download.path())!, 'utf8')
      .trimEnd()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { actor: string; action: string; target?: string; details?: { dryRun?: boolean }; status: number },
      );
    expect(entries.map((e) => [e.actor, e.action, e.target, e.details?.dryRun, e.status])).toEqual([
      [ADMIN, 'push.retry', expect.any(String), undefined, 200],
      [ADMIN, 'app.push', 'journal', false, 200],
      [ADMIN, 'app.push', 'journal', true, 200],
      [ADMIN, 'app.push', 'journal', false, 200],
      [ADMIN, 'app.push', 'journal', true, 200],
      [ADMIN, 'session.create', undefined, undefined, 200],
      [ADMIN, 'session.create', undefined, undefined, 401],
      [ADMIN, 'application.update', 'journal', undefined, 202],
    ]);
    await page.getByRole('button', { name: 'Log out' }).click();
    await watch.see(page.getByRole('heading', { name: 'Dex console' }));
  });

  it("refuses instance owners' tokens, app tokens, forged sessions and anonymous callers", async () => {
    const calls = ['/api/admin/apps', '/api/admin/apps/journal', '/api/admin/instances', '/api/admin/clusters', '/api/admin/audit'];
    for (const path of calls) {
      const status = async (headers: Record<string, string>) => (await fetch(`${product.dexUrl}${path}`, { headers })).status;
      expect([path, await status({})]).toEqual([path, 401]);
      expect([path, await status({ Cookie: 'pds_dex_admin=forged' })]).toEqual([path, 401]);
      expect([path, await status({ 'X-Auth-Token': tokens.alice! })]).toEqual([path, 403]);
      expect([path, await status({ 'X-Auth-Token': adminAppToken })]).toEqual([path, 403]);
      expect([path, await status({ 'X-Auth-Token': carol.token })]).toEqual([path, 403]);
    }
    const push = await fetch(`${product.dexUrl}/api/admin/apps/journal/push`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': adminAppToken },
      body: JSON.stringify({ cluster: CLUSTER, record: { ...journal('Sneaky'), id: 'journal' } }),
    });
    expect(push.status).toBe(403);
    // The administrator's owner token still works, for scripts.
    expect((await fetch(`${product.dexUrl}/api/admin/clusters`, { headers: { 'X-Auth-Token': tokens.admin! } })).status).toBe(200);
  });
});
