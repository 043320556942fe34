// An owner's account in a real browser (Chromium through playwright-core) against the product as
// `pnpm start` runs it, its mail going to an SMTP server this test reads: forgot password → the mail →
// the reset page it links to → log in with the new password; then two-factor authentication set up
// from the QR code's key → log out → log in with a code. The new screens are checked at desktop and
// phone width, light and dark (axe-core, sideways scrolling).
import { existsSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { startSmtpCatcher, type SmtpCatcher } from '../../../scripts/lib/smtp-catcher';
import { CHROMIUM, launchBrowser, PageWatch } from './support/browser';
import { resolveLocalhostSubdomains } from './support/localhost-dns';
import { startProduct, type Product } from './support/product';

jest.setTimeout(180_000);

const PASSWORD = 'correct-horse-battery-staple-42';
const NEW_PASSWORD = 'purple-elephant-juggles-quietly-7';

const describeBrowser = process.env.SKIP_BROWSER_TESTS === '1' ? describe.skip : describe;

async function until<T>(check: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function logIn(page: Page, password: string): Promise<void> {
  await page.getByLabel('Username').fill('carol');
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

describeBrowser('an owner’s account in Chromium', () => {
  let product: Product;
  let mailbox: SmtpCatcher;
  let browser: Browser;
  let restoreDns: () => void;
  let page: Page;
  let carol: string;
  const watch = new PageWatch();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    restoreDns = resolveLocalhostSubdomains();
    mailbox = await startSmtpCatcher();
    [product, browser] = await Promise.all([startProduct({ SMTP_URL: mailbox.url }), launchBrowser()]);
    carol = product.instanceUrl('carol');
    const signup = await fetch(`${product.clusterUrl}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        fullName: 'Carol Example',
        username: 'carol',
        email: 'carol@example.com',
        pass: PASSWORD,
        passRepeat: PASSWORD,
      }),
    });
    expect(signup.status).toBe(201);
    page = await watch.newPage(await browser.newContext());
  });
  afterAll(async () => {
    await browser?.close();
    await product?.stop();
    await mailbox?.stop();
    restoreDns?.();
  });
  afterEach(() => expect(watch.endTest()).toEqual([]));

  it('resets a forgotten password through the mailed link, then logs in with the new one', async () => {
    await page.goto(carol);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('E-mail address').fill('carol@example.com');
    await page.getByRole('button', { name: 'Send the link' }).click();
    await watch.see(page.getByText('you will shortly receive an email'));
    await watch.screen(page, 'forgot-password');

    const mail = await until(() => mailbox.messages.find((m) => m.to.includes('carol@example.com')), 'the reset mail');
    const link = /http:\/\/carol\.pds\.localhost:\d+\/#\/reset\/[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
    expect(link).toBeDefined();
    await page.goto(link as string);
    await watch.see(page.getByRole('heading', { name: 'Choose a new password' }));
    await watch.screen(page, 'reset-password');
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('The same again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await watch.see(page.getByText('Your password is set'));
    expect(page.url()).not.toContain('/reset/');

    watch.expect(401, '/users/access_token');
    await logIn(page, PASSWORD);
    await watch.see(page.getByText('Wrong username or password'));
    await logIn(page, NEW_PASSWORD);
    await watch.see(page.getByRole('heading', { name: 'Files' }));
  });

  it('sets up two-factor authentication from the QR code’s key, and then logs in with a code', async () => {
    // The account's own pages are under its menu in the top bar.
    await page.getByRole('button', { name: /your account$/ }).click();
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    await watch.see(page.getByRole('img', { name: 'QR code for your authenticator app' }));
    const secret = OTPAuth.Secret.fromBase32((await page.getByTestId('totp-secret').textContent()) ?? '');
    const code = () => OTPAuth.TOTP.generate({ secret });
    const enrolledAt = Math.floor(Date.now() / 30_000);
    await page.getByLabel('Code from your authenticator app').fill(code());
    await page.getByRole('button', { name: 'Turn on' }).click();
    await watch.see(page.getByRole('list', { name: 'Recovery codes' }));
    expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
    await watch.screen(page, 'security');

    await page.getByRole('button', { name: /your account$/ }).click();
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    watch.expect(401, '/users/access_token');
    await logIn(page, NEW_PASSWORD);
    const codeField = page.getByLabel('Code from your authenticator app (or a recovery code)');
    await watch.see(codeField);
    // A code is good once: the next one comes with the next 30-second step.
    await until(() => (Math.floor(Date.now() / 30_000) > enrolledAt ? true : undefined), 'the next code', 35_000);
    await codeField.fill(code());
    await page.getByRole('button', { name: 'Log in' }).click();
    // Logged in: the account's menu is in the top bar (the screen is the one the tab was on).
    await watch.see(page.getByRole('button', { name: /your account$/ }));
  });
});
