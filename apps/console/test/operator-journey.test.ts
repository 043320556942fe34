// The operator's console in Chromium against the product as `pnpm start` runs it with ADMIN_PORT (issue
// 36). An operator made by the CLI logs in, finds an instance by name, suspends it (its owner then gets
// 423 from the API), resumes it, and sets a quota that the owner's next upload hits; a registration that
// failed while dex did not trust the cluster is retried from the cluster page once it does, and completes;
// every action is in the audit with the operator's name. The console lives on the admin listener only:
// never on an instance's address, and never for an owner's token or no session. Every screen is checked
// at desktop and phone width, light and dark.
import type { Browser, Page } from 'playwright-core';
import { CertifiedClusterRepository, createDexDb } from '@pds/db';
import { adminCli } from '../../gateway/src/admin/cli';
import { freePort } from '../../../scripts/lib/ports';
import { PageWatch, DESKTOP } from './support/browser';
import { eventually, signUp, startJourney, type Journey } from './support/journey';
import { CLUSTER, type Product } from './support/product';

jest.setTimeout(180_000);

const OPERATOR_PASSWORD = 'lighthouse keeper on a calm night';
const ADMIN_TOKEN = 'a'.repeat(24) + Math.random().toString(36).slice(2).padEnd(16, 'x');

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

describeBrowser("the operator's console in Chromium", () => {
  let journey: Journey | undefined;
  let product: Product;
  let browser: Browser;
  let page: Page;
  let aliceToken: string;
  const watch = new PageWatch();
  const alice = `alice.${CLUSTER}`;

  beforeAll(async () => {
    // Dex trusts another cluster only, so every registration of this one fails for good (a failed job).
    const env = { ADMIN_PORT: String(await freePort()), ADMIN_TOKEN, DEX_CLUSTERS: 'elsewhere.localhost' };
    journey = await startJourney(env);
    ({ product, browser } = journey);
    aliceToken = await signUp(product, 'alice');
    await signUp(product, 'bob');
    const out: string[] = [];
    const code = await adminCli(['operators', 'add', 'olivia'], {
      env: { ADMIN_URL: product.adminUrl, ADMIN_TOKEN },
      out: (text) => out.push(text),
      err: (text) => out.push(text),
      input: async () => `${OPERATOR_PASSWORD}\n`,
    });
    if (code !== 0) throw new Error(`pnpm admin operators add: ${out.join('\n')}`);
  });
  afterAll(() => journey?.stop());
  afterEach(() => expect(watch.endTest()).toEqual([]));

  const aliceCall = (path: string) => fetch(`${product.instanceUrl('alice')}${path}`, { headers: { 'X-Auth-Token': aliceToken } });

  it('logs an operator in, finds an instance by name, suspends it (its owner gets 423), resumes it, and sets a quota an upload then hits', async () => {
    page = await watch.newPage(await browser.newContext({ viewport: DESKTOP }));
    await page.goto(`${product.adminUrl}/`);
    await watch.see(page.getByRole('heading', { name: 'Operator console' }));
    await watch.screen(page, 'operator-login', { dark: true });
    watch.expect(401, '/session');
    await page.getByLabel('Name').fill('olivia');
    await page.getByLabel('Password').fill('wrong password, surely');
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await watch.see(page.getByText('Wrong name or password'));
    await page.getByLabel('Password').fill(OPERATOR_PASSWORD);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await watch.see(page.getByRole('heading', { name: 'Instances' }));
    // The session is a cookie the page's scripts cannot read.
    expect(await page.evaluate(() => document.cookie)).toBe('');

    await page.getByLabel('Find by address or owner e-mail').fill('ali');
    await page.getByRole('row').filter({ hasText: 'bob' }).waitFor({ state: 'detached' });
    await watch.see(page.getByText('1 found'));
    await watch.screen(page, 'operator-instances', { dark: true });
    await page.getByRole('link', { name: alice }).click();
    await watch.see(page.getByRole('heading', { name: alice }));
    await watch.screen(page, 'operator-instance');

    await page.getByLabel(/^Reason/).fill('abuse report 17');
    await page.getByRole('button', { name: 'Suspend' }).click();
    await watch.see(page.getByText('Suspended: every call to it now answers 423.'));
    expect((await aliceCall('/api/v2.6/files/tags')).status).toBe(423);

    await page.getByLabel(/^Reason/).fill('report resolved');
    await page.getByRole('button', { name: 'Resume' }).click();
    await watch.see(page.getByText('Resumed: it answers again.'));
    expect((await aliceCall('/api/v2.6/files/tags')).status).toBe(200);

    await page.getByLabel('File quota').fill('1 KiB');
    await page.getByRole('button', { name: 'Save quotas' }).click();
    await watch.see(page.getByText('Quotas saved.'));
    await watch.see(page.getByText('of 1 KiB'));
    const upload = await fetch(`${product.instanceUrl('alice')}/api/v2.6/files/upload`, {
      method: 'POST',
      headers: { 'X-Auth-Token': aliceToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'big.bin', source: 'test' }),
    });
    const { fileId, contentUrl } = (await upload.json()) as { fileId: string; contentUrl: string };
    await fetch(contentUrl, { method: 'PUT', headers: { 'x-amz-server-side-encryption': 'AES256' }, body: new Uint8Array(4096) });
    const complete = await fetch(`${product.instanceUrl('alice')}/api/v2.6/files/file/${fileId}/complete`, {
      method: 'PUT',
      headers: { 'X-Auth-Token': aliceToken },
    });
    expect(complete.status).toBe(413);
    expect(((await complete.json()) as { message: string }).message).toMatch(/quota/);
  });

  it('retries from the cluster page a registration that failed, and it completes', async () => {
    await page.getByRole('link', { name: 'Cluster' }).click();
    await watch.see(page.getByRole('heading', { name: 'Cluster' }));
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await page.getByRole('button', { name: /failed in dex-registration/ }).count()) > 0 ? true : undefined;
    }, 'the failed registrations');
    await watch.see(page.getByText('Gateway worker'));
    // Dex is told to trust the cluster, as `pnpm dex certify pds.localhost` does.
    const dexDb = createDexDb(product.dexDatabaseUrl, { max: 1 });
    await new CertifiedClusterRepository(dexDb).ensure([CLUSTER]);
    await dexDb.$disconnect();

    await page.getByRole('button', { name: /failed in dex-registration/ }).click();
    const job = page.getByRole('listitem').filter({ hasText: `register-${alice}` });
    await watch.see(job.getByText('not under a certified cluster'));
    await job.getByRole('button', { name: 'Inspect' }).click();
    await watch.see(page.getByLabel('What the job carries').filter({ hasText: alice }));
    await watch.screen(page, 'operator-cluster', { dark: true });
    await job.getByRole('button', { name: 'Retry' }).click();
    await watch.see(page.getByText(`Job register-${alice} is queued again.`));
    await eventually(async () => {
      const res = await fetch(`${product.adminUrl}/instances/${alice}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      return ((await res.json()) as { dexState: string }).dexState === 'registered' ? true : undefined;
    }, 'alice to be registered with dex');
  });

  it('shows every action in the audit with the operator who did it', async () => {
    await page.getByRole('link', { name: 'Audit' }).click();
    await watch.see(page.getByRole('heading', { name: 'Audit' }));
    for (const action of ['Retry job', 'Set quota', 'Resume', 'Suspend']) {
      await watch.see(page.getByRole('listitem').filter({ hasText: action }).filter({ hasText: 'olivia from' }).first());
    }
    await watch.screen(page, 'operator-audit');
    const res = await fetch(`${product.adminUrl}/audit/export`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const entries = (await res.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { actor: string; action: string; target?: string; status: number });
    expect(entries.filter((e) => e.actor === 'operator:olivia' && e.status < 400).map((e) => [e.action, e.target])).toEqual([
      ['job.retry', `dex-registration/register-${alice}`],
      ['instance.quota', alice],
      ['instance.resume', alice],
      ['instance.suspend', alice],
      ['session.create', undefined],
    ]);
    await page.getByRole('button', { name: 'Log out' }).click();
    await watch.see(page.getByRole('heading', { name: 'Operator console' }));
  });

  it('is not reachable on an instance address, and refuses owners, forged sessions and anonymous callers', async () => {
    const onInstance = await fetch(`${product.instanceUrl('alice')}/operator.html`);
    expect(await onInstance.text()).not.toContain('src/operator');
    for (const path of ['/instances', '/cluster', '/audit']) {
      expect((await fetch(`${product.instanceUrl('alice')}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(
        404,
      );
      expect((await fetch(`${product.adminUrl}${path}`)).status).toBe(401);
      expect((await fetch(`${product.adminUrl}${path}`, { headers: { 'X-Auth-Token': aliceToken } })).status).toBe(401);
      expect((await fetch(`${product.adminUrl}${path}`, { headers: { Authorization: `Bearer ${aliceToken}` } })).status).toBe(401);
      expect((await fetch(`${product.adminUrl}${path}`, { headers: { Cookie: 'pds_operator=forged' } })).status).toBe(401);
    }
  });
});
