// Test helpers for apps: a real dex key pair, signed pushes, and an app set up with its token.
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type { AppRecordInput } from '@pds/app-record';
import type { Env } from '@pds/config';
import {
  APP_PUSH_SCOPE,
  DEX_ISSUER,
  epochSeconds,
  generateRsaKeyPair,
  issueServiceToken,
  signingKeys,
  type SigningKeys,
} from '@pds/tokens';
import { startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { staticDexKey } from '../src/apps/dex-keys';

export async function dexKeyPair(): Promise<SigningKeys> {
  const pem = await generateRsaKeyPair();
  return signingKeys(pem.keyId, pem.privateKeyPem);
}

/** A test gateway that trusts, as dex's key, a key pair made for the test (a real key, not a mock). */
export async function startGatewayWithDex(env: Partial<Record<keyof Env, string>> = {}): Promise<{ gw: TestGateway; dex: SigningKeys }> {
  const dex = await dexKeyPair();
  return { gw: await startTestGateway(env, { dexKeys: staticDexKey(dex.publicKey) }), dex };
}

export const nowSeconds = (gw: TestGateway): number => epochSeconds(gw.clock);

export function pushToken(
  gw: TestGateway,
  keys: SigningKeys,
  audience: string,
  change: Partial<{ issuer: string; scope: string; ttlSeconds: number; at: number }> = {},
): string {
  const { at, ...rest } = change;
  return issueServiceToken(keys, { issuer: DEX_ISSUER, audience, scope: APP_PUSH_SCOPE, ...rest }, at ?? nowSeconds(gw));
}

export function appRecord(namespace: string, change: Partial<AppRecordInput> = {}): AppRecordInput {
  return {
    title: `The ${namespace} app`,
    namespace,
    logoUrl: `https://${namespace}.example/logo.png`,
    url: `https://${namespace}.example/`,
    category: 'app',
    ...change,
  };
}

export function push(app: RequestListener, address: string, token: string, appId: string, body: unknown) {
  return request(app)
    .put(`/api/dex/applications/${appId}`)
    .set('Host', address)
    .set('X-Auth-Token', token)
    .send(body as object);
}

/** Pushes the app as dex would, sets it up as the owner and returns its token. */
export async function installApp(gw: TestGateway, keys: SigningKeys, owner: SignedUp, record: AppRecordInput) {
  const appId = record.id ?? record.namespace;
  const pushed = await push(gw.app, owner.address, pushToken(gw, keys, owner.address), appId, { version: 1, record });
  if (pushed.status !== 200) throw new Error(`push of ${appId} failed: ${pushed.status} ${JSON.stringify(pushed.body)}`);
  const setup = await request(gw.app)
    .post(`/api/v2.6/applications/${appId}/setup`)
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token);
  if (setup.status !== 200) throw new Error(`setup of ${appId} failed: ${setup.status} ${JSON.stringify(setup.body)}`);
  const token = await request(gw.app)
    .get(`/api/v2.6/applications/${appId}/access-token`)
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token);
  if (token.status !== 200) throw new Error(`token of ${appId} failed: ${token.status} ${JSON.stringify(token.body)}`);
  return { appId, token: token.body.accessToken as string, userId: token.body.userId as string };
}
