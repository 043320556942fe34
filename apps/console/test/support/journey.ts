// What the journeys against the product (support/product.ts) share: the product and Chromium started
// together, waiting for what the product does by itself, signing instances up as a person does, and
// dex's CLI as an operator runs it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, launchBrowser } from './browser';
import { resolveLocalhostSubdomains } from './localhost-dns';
import { startProduct, type Product } from './product';

export interface Journey {
  product: Product;
  browser: Browser;
  stop(): Promise<void>;
}

/** The product (`startProduct`'s arguments) and Chromium, with *.localhost resolved for Node's own calls. */
export async function startJourney(...args: Parameters<typeof startProduct>): Promise<Journey> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  const restoreDns = resolveLocalhostSubdomains();
  const [product, browser] = await Promise.allSettled([startProduct(...args), launchBrowser()]);
  const stop = async () => {
    if (browser.status === 'fulfilled') await browser.value.close();
    if (product.status === 'fulfilled') await product.value.stop();
    restoreDns();
  };
  if (product.status === 'rejected' || browser.status === 'rejected') {
    await stop();
    throw product.status === 'rejected' ? product.reason : (browser as PromiseRejectedResult).reason;
  }
  return { product: product.value, browser: browser.value, stop };
}

export const PASSWORD = 'correct-horse-battery-staple-42';

/** Polls `check` until it gives a value; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Signs up `username` on the product's cluster: its owner's token. */
export async function signUp(product: Product, username: string): Promise<string> {
  const res = await fetch(`${product.clusterUrl}/api/signup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      fullName: `${username} Example`,
      username,
      email: `${username}@example.com`,
      pass: PASSWORD,
      passRepeat: PASSWORD,
    }),
  });
  if (res.status !== 201) throw new Error(`sign-up of ${username}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** `pnpm dex <args>` on the product's dex database, `input` on its standard input; its output. */
export function dexCli(product: Product, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--conditions=@pds/source', '--import', 'tsx', 'apps/dex/src/cli.ts', ...args],
      {
        cwd: path.resolve(__dirname, '../../../..'),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DEX_DATABASE_URL: product.dexDatabaseUrl },
      },
      (error, stdout, stderr) => (error ? reject(new Error(`pnpm dex ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout)),
    );
    child.stdin?.end(input);
  });
}
