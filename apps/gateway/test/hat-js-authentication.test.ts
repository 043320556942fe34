// auth() of the published client, unchanged: its login-page URL, the instance check, its token state,
// and the sliding refresh that reaches it through the X-Auth-Token response header.
import { HatClient } from '@dataswift/hat-js';
import request from 'supertest';
import { useGateway } from '../../../test/support/use-gateway';
import { hatClient, serveForHatJs } from './hat-js-support';

const { gw, owners } = useGateway({ owners: ['alice'] });
const { alice } = owners;
let served: { close(): Promise<void> };

beforeAll(async () => {
  served = await serveForHatJs(gw);
});
afterAll(() => served.close());

describe('hat-js auth()', () => {
  it("getHatDomain and getToken come from the token's issuer and the token itself", () => {
    const auth = hatClient(alice.token).auth();
    expect(auth.getHatDomain()).toBe(`http://${alice.address}`);
    expect(auth.getToken()).toBe(alice.token);
  });

  it('isTokenExpired: false for a fresh instance token (its iat and exp are what the client expects)', () => {
    expect(hatClient(alice.token).auth().isTokenExpired(alice.token)).toBe(false);
    const claims = JSON.parse(Buffer.from(alice.token.split('.')[1] as string, 'base64url').toString()) as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBe(3 * 24 * 3600);
  });

  it('isDomainRegistered: true for an instance of the cluster (its /publickey answers), false for an unknown one', async () => {
    const auth = hatClient(alice.token).auth();
    expect(await auth.isDomainRegistered(alice.address)).toBe(true);
    expect(await auth.isDomainRegistered('nobody.pds.test')).toBe(false);
  });

  it("generateHatLoginUrl points at the instance's #/hatlogin page with the app, redirect and fallback", () => {
    const url = hatClient(alice.token)
      .auth()
      .generateHatLoginUrl(`http://${alice.address}`, 'notes', 'https://notes.example/in', 'https://notes.example/out');
    expect(url).toBe(`http://${alice.address}/#/hatlogin?name=notes&redirect=https://notes.example/in&fallback=https://notes.example/out`);
    // The page itself is served at the instance root (the web console); the fragment never reaches the server.
    expect(new URL(url).pathname).toBe('/');
  });

  it('picks up the refreshed token the instance sends in X-Auth-Token once the session is over an hour old', async () => {
    const hat = hatClient(alice.token);
    gw.clock.advance(2 * 3600);
    const res = await hat.hatData().create('diary', 'days', { mood: 'fine' });
    expect(res.status).toBe(201);
    const fresh = hat.auth().getToken() as string;
    expect(fresh).not.toBe(alice.token);
    expect(res.token).toBe(fresh);
    const validated = await request(gw.app).get('/users/access_token/validate').set('Host', alice.address).set('X-Auth-Token', fresh);
    expect(validated.status).toBe(200);
    // The client sends the fresh token from then on.
    const next = await hat.hatData().getAllDefault('diary', 'days');
    expect(next.status).toBe(200);
    expect(await gw.db.dataRecord.count({ where: { namespace: 'diary' } })).toBe(1);
  });

  it('signOut forgets the domain and the token; a client made without a token is not authenticated', () => {
    const hat = hatClient(alice.token);
    hat.auth().signOut();
    expect(hat.auth().getToken()).toBe('');
    expect(hat.auth().getHatDomain()).toBe('');
    expect(() => hat.hatData()).toThrow();
    expect(() => new HatClient({}).files()).toThrow();
  });
});
