// Share links (issue 33): the owner makes, lists and revokes them; anyone holding one opens it without an
// account, as a browser (pages) or a script (JSON). The link is a capability checked on every use: its
// password (rate limited, and answering alike whether the link exists), its expiry (an injected clock),
// its download limit (exact under concurrent downloads), its revocation (on another gateway from its
// next request), the state of its files (the trash) and of its instance. It never reveals another file.
// Its making, use and revocation reach the owner's activity log; the export holds it without secrets.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { PortabilityRepository } from '@pds/db';
import request from 'supertest';
import { addUser, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { eventually } from '../../../test/support/eventually';
import { instanceSource } from '../src/portability/source';
import { call, uploadFile, type As } from './files-support';
import { cookieFrom, givePassword, makeLink, sha256, visit, type MadeLink } from './links-support';
import { startPeer, type Peer } from './peer-gateway';

const PASSWORD = 'friday-2026';
const LIMIT = 3;
/** Wrong passwords on one link, from every address together, before those addresses wait. */
const LINK_LIMIT = 6;

let gw: TestGateway;
let alice: SignedUp;
let owner: As;
let bob: SignedUp;
let carol: { token: string; userId: string };
const ids = { tax: '', photo: '', notes: '', secret: '', draft: '' };

beforeAll(async () => {
  // Loopback's X-Forwarded-For is believed, so tests can speak from several client addresses.
  gw = await startTestGateway({ LOGIN_RATE_LIMIT: String(LIMIT), LOGIN_ACCOUNT_LIMIT: String(LINK_LIMIT), TRUST_PROXY: 'loopback' });
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
  carol = await addUser(gw.app, alice, 'carol');
  owner = { address: alice.address, token: alice.token };
  ids.tax = (await uploadFile(gw, owner, { name: 'tax.pdf', source: 'console', tags: ['accountant'] }, Buffer.from('%PDF tax'))).fileId;
  ids.photo = (await uploadFile(gw, owner, { name: 'photo.jpg', source: 'console', tags: ['accountant'] }, randomBytes(2000))).fileId;
  ids.notes = (await uploadFile(gw, owner, { name: 'notes.txt', source: 'console' }, Buffer.from('receipts\n'))).fileId;
  ids.secret = (await uploadFile(gw, owner, { name: 'diary.txt', source: 'console' }, Buffer.from('dear diary'))).fileId;
  const draft = await call(gw, 'post', '/upload', owner, { name: 'draft.txt', source: 'console' }).expect(200);
  ids.draft = draft.body.fileId as string;
});
afterAll(() => gw?.close());

const links = (where: object = {}) => gw.db.shareLink.findMany({ where, orderBy: { createdAt: 'asc' } });
const instanceId = async (address: string) => (await gw.db.instance.findUniqueOrThrow({ where: { address } })).id;

describe('the owner', () => {
  it('makes a link to a file: its address once, its token kept only as a hash, and an event', async () => {
    const res = await call(gw, 'post', '/links', owner, { fileIds: [ids.tax] }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      url: expect.stringMatching(/^http:\/\/alice\.pds\.test\/s\/[A-Za-z0-9_-]{32}$/),
      fileIds: [ids.tax],
      state: 'active',
      hasPassword: false,
      downloads: 0,
      views: 0,
      allowDownload: true,
      createdAt: gw.clock().toISOString(),
    });
    const token = (res.body.url as string).split('/s/')[1] as string;
    const [row] = await links({ id: res.body.id });
    expect(row?.tokenHash).toBe(sha256(Buffer.from(token)));
    expect(JSON.stringify(await links())).not.toContain(token);
    const events = await gw.db.event.findMany({ where: { instanceId: await instanceId(alice.address), type: 'link.created' } });
    expect(events.map((e) => e.object)).toContainEqual({ linkId: res.body.id, fileId: ids.tax, name: 'tax.pdf', files: 1 });
  });

  it('makes a link to the files a template matches, with a password hashed as account passwords are', async () => {
    const res = await call(gw, 'post', '/links', owner, {
      template: { tags: ['accountant'] },
      password: PASSWORD,
      downloadLimit: 2,
      expiresAt: new Date(gw.clock().getTime() + 86_400_000).toISOString(),
      allowDownload: false,
    }).expect(201);
    expect(new Set(res.body.fileIds)).toEqual(new Set([ids.tax, ids.photo]));
    expect(res.body).toMatchObject({ hasPassword: true, downloadLimit: 2, allowDownload: false, expiresAt: expect.any(String) });
    const [row] = await links({ id: res.body.id });
    expect(row?.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(row?.passwordHash).not.toContain(PASSWORD);
  });

  it.each([
    ['no files', () => ({})],
    ['both ids and a template', () => ({ fileIds: [ids.tax], template: {} })],
    ['an empty selection', () => ({ fileIds: [] })],
    ['an expiry in the past', () => ({ fileIds: [ids.tax], expiresAt: '2001-01-01T00:00:00Z' })],
    ['a short password', () => ({ fileIds: [ids.tax], password: 'abc' })],
    ['a download limit of 0', () => ({ fileIds: [ids.tax], downloadLimit: 0 })],
    ['a download limit that is no number', () => ({ fileIds: [ids.tax], downloadLimit: '3' })],
  ])('refuses %s with 400, making nothing', async (_what, body) => {
    const before = await links();
    const res = await call(gw, 'post', '/links', owner, body()).expect(400);
    expect(res.body).toEqual({ error: 'Bad Request', message: expect.any(String) });
    expect(await links()).toEqual(before);
  });

  it('refuses a missing file (404), one not uploaded yet (409), a template matching nothing (404), and makes nothing', async () => {
    const before = await links();
    expect((await call(gw, 'post', '/links', owner, { fileIds: [ids.tax, 'nothing.txt'] }).expect(404)).body.message).toBe(
      'File nothing.txt not found',
    );
    expect((await call(gw, 'post', '/links', owner, { fileIds: [ids.draft] }).expect(409)).body.message).toBe(
      `File ${ids.draft} has not been uploaded`,
    );
    await call(gw, 'post', '/links', owner, { template: { tags: ['nobody-uses-this'] } }).expect(404);
    // Another instance's file is no file here.
    const bobs = await uploadFile(gw, { address: bob.address, token: bob.token }, { name: 'bob.txt', source: 'x' });
    await call(gw, 'post', '/links', owner, { fileIds: [bobs.fileId] }).expect(404);
    expect(await links()).toEqual(before);
  });

  it('is the only one who may: a user of the instance gets 403, no token 401', async () => {
    await call(gw, 'post', '/links', { address: alice.address, token: carol.token }, { fileIds: [ids.tax] }).expect(403);
    await call(gw, 'get', '/links', { address: alice.address, token: carol.token }).expect(403);
    await call(gw, 'get', '/links', { address: alice.address }).expect(401);
  });

  it("lists the links newest first, with their use, never their address; a file's alone with fileId", async () => {
    const photoLink = await makeLink(gw, owner, { fileIds: [ids.photo] });
    gw.clock.advance(1);
    const both = await makeLink(gw, owner, { fileIds: [ids.notes, ids.photo] });
    await visit(gw.app, alice.address, `${both.path}/download/${ids.notes}`).expect(303);
    const all = (await call(gw, 'get', '/links', owner).expect(200)).body as { id: string; url?: string }[];
    expect(all[0]?.id).toBe(both.id);
    expect(all.every((link) => link.url === undefined)).toBe(true);
    const photo = (await call(gw, 'get', `/links?fileId=${ids.photo}`, owner).expect(200)).body as { id: string }[];
    expect(photo.map((link) => link.id)).toEqual(expect.arrayContaining([photoLink.id, both.id]));
    expect(photo.find((link) => link.id === both.id)).toMatchObject({
      downloads: 1,
      lastUsedAt: gw.clock().toISOString(),
      state: 'active',
    });
    expect((await call(gw, 'get', `/links?fileId=${ids.secret}`, owner).expect(200)).body).toEqual([]);
  });

  it('revokes a link once: 200 with its state, again without a second event; 404 for none', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.notes] });
    const revoked = await call(gw, 'delete', `/links/${link.id}`, owner).expect(200);
    expect(revoked.body).toMatchObject({ id: link.id, state: 'revoked', revokedAt: gw.clock().toISOString() });
    await call(gw, 'delete', `/links/${link.id}`, owner).expect(200);
    const events = await gw.db.event.findMany({ where: { type: 'link.revoked' } });
    expect(events.filter((e) => (e.object as { linkId: string }).linkId === link.id)).toHaveLength(1);
    await call(gw, 'delete', '/links/00000000-0000-4000-8000-000000000000', owner).expect(404);
    await call(gw, 'delete', '/links/not-a-uuid', owner).expect(404);
    // Bob cannot revoke alice's link, even with its id: his instance has no such link.
    await call(gw, 'delete', `/links/${link.id}`, { address: bob.address, token: bob.token }).expect(404);
  });
});

describe('the link, opened without an account', () => {
  let one: MadeLink;
  let three: MadeLink;

  beforeAll(async () => {
    one = await makeLink(gw, owner, { fileIds: [ids.tax] });
    three = await makeLink(gw, owner, { fileIds: [ids.tax, ids.photo, ids.notes] });
  });

  it('shows a browser a page of the file: name, size, type, preview, download; no referrer, no index, no script', async () => {
    const res = await visit(gw.app, alice.address, one.path, { browser: true }).expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect(res.headers['cache-control']).toBe('no-store');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(res.text).toContain('<h1>tax.pdf</h1>');
    expect(res.text).toContain('PDF document · 8 B');
    expect(res.text).toContain(`<iframe src="${one.path}/preview/${ids.tax}" title="Preview of tax.pdf">`);
    expect(res.text).toContain(`href="${one.path}/download">Download</a>`);
    expect(res.text).not.toContain('<script');
  });

  it('answers a script with JSON: the file, where to preview and download it, nothing else', async () => {
    const res = await visit(gw.app, alice.address, three.path).expect(200);
    const base = `http://alice.pds.test${three.path}`;
    expect(res.body).toEqual({
      files: [
        {
          fileId: ids.tax,
          name: 'tax.pdf',
          size: 8,
          type: 'application/pdf',
          preview: `${base}/preview/${ids.tax}`,
          download: `${base}/download/${ids.tax}`,
        },
        {
          fileId: ids.photo,
          name: 'photo.jpg',
          size: 2000,
          type: 'image/jpeg',
          preview: `${base}/preview/${ids.photo}`,
          download: `${base}/download/${ids.photo}`,
        },
        {
          fileId: ids.notes,
          name: 'notes.txt',
          size: 9,
          type: 'text/plain; charset=utf-8',
          preview: `${base}/preview/${ids.notes}`,
          download: `${base}/download/${ids.notes}`,
        },
      ],
      allowDownload: true,
      download: `${base}/download`,
    });
  });

  it('lists a selection with its zip download', async () => {
    const res = await visit(gw.app, alice.address, three.path, { browser: true }).expect(200);
    expect(res.text).toContain('<h1>3 files</h1>');
    expect(res.text).toContain(`href="${three.path}/download">Download all as a zip</a>`);
    for (const name of ['tax.pdf', 'photo.jpg', 'notes.txt']) expect(res.text).toContain(`<span class="name">${name}</span>`);
  });

  it('offers no download through a view-only link, and refuses one asked for', async () => {
    const view = await makeLink(gw, owner, { fileIds: [ids.photo], allowDownload: false });
    const page = await visit(gw.app, alice.address, view.path, { browser: true }).expect(200);
    expect(page.text).toContain(`<img src="${view.path}/preview/${ids.photo}" alt="Preview of photo.jpg">`);
    expect(page.text).not.toContain('/download');
    const refused = await visit(gw.app, alice.address, `${view.path}/download`).expect(403);
    expect(refused.body).toEqual({ error: 'Forbidden', message: 'This link lets you view what it shares, not download it.' });
    await visit(gw.app, alice.address, `${view.path}/preview/${ids.photo}`).expect(303);
  });

  it('counts views and downloads (a HEAD counts nothing), and the owner reads each in the activity log', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.notes] });
    await visit(gw.app, alice.address, link.path, { browser: true, from: '203.0.113.5' }).expect(200);
    await request(gw.app).head(link.path).set('Host', alice.address).expect(200);
    await request(gw.app).head(`${link.path}/download`).set('Host', alice.address);
    await visit(gw.app, alice.address, `${link.path}/download`, { from: '203.0.113.5' }).expect(303);
    const [row] = await links({ id: link.id });
    expect(row).toMatchObject({ views: 1, downloads: 1 });
    const used = await eventually(async () => {
      const log = await request(gw.app)
        .get('/api/v2.6/activity?type=link.used')
        .set('Host', alice.address)
        .set('X-Auth-Token', alice.token);
      const entries = (log.body as { object: { linkId: string } }[]).filter((e) => e.object.linkId === link.id);
      return entries.length === 2 ? entries : undefined;
    });
    expect(used).toEqual(
      expect.arrayContaining(
        (['viewed', 'downloaded'] as const).map((action) =>
          expect.objectContaining({
            kind: 'read',
            type: 'link.used',
            actor: { kind: 'anonymous', id: null, name: null },
            names: { [ids.notes]: 'notes.txt' },
            object: { linkId: link.id, action, fileId: ids.notes, name: 'notes.txt', files: 1 },
            address: '203.0.113.5',
          }),
        ),
      ),
    );
  });

  it('says plainly what is wrong: no link at a made-up address, to a browser and to a script', async () => {
    const page = await visit(gw.app, alice.address, `/s/${'A'.repeat(32)}`, { browser: true }).expect(404);
    expect(page.text).toContain('There is no link at this address.');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    const json = await visit(gw.app, alice.address, '/s/short').expect(404);
    expect(json.body).toEqual({ error: 'Not Found', message: expect.stringContaining('There is no link at this address.') });
  });

  it("is no link at another instance's address, nor of an instance that does not exist", async () => {
    expect((await visit(gw.app, bob.address, one.path).expect(404)).body.message).toMatch(/no link/);
    expect((await visit(gw.app, 'nobody.pds.test', one.path).expect(404)).body.message).toMatch(/no link/);
  });
});

describe('a password', () => {
  let link: MadeLink;

  beforeAll(async () => {
    link = await makeLink(gw, owner, { fileIds: [ids.tax], password: PASSWORD });
  });

  it('is asked for before anything of the link is shown', async () => {
    const page = await visit(gw.app, alice.address, link.path, { browser: true }).expect(401);
    expect(page.text).toContain(`<form method="post" action="${link.path}">`);
    expect(page.text).not.toContain('tax.pdf');
    expect((await visit(gw.app, alice.address, link.path).expect(401)).body).toEqual({
      error: 'Not Authenticated',
      message: 'This link needs a password.',
    });
    await visit(gw.app, alice.address, `${link.path}/download`).expect(401);
    await visit(gw.app, alice.address, `${link.path}/preview/${ids.tax}`).expect(401);
  });

  it('is limited after wrong tries, answering alike whether the link exists; the right one is then served elsewhere', async () => {
    const from = '198.51.100.7';
    const wrong = await givePassword(gw.app, alice.address, link.path, 'wrong-guess', { from, browser: false }).expect(401);
    const noLink = await givePassword(gw.app, alice.address, `/s/${'B'.repeat(32)}`, PASSWORD, { from, browser: false }).expect(401);
    expect(noLink.body).toEqual(wrong.body);
    expect(wrong.body).toEqual({ error: 'Not Authenticated', message: 'That password is not right.' });
    const page = await givePassword(gw.app, alice.address, link.path, 'wrong-again', { from }).expect(401);
    expect(page.text).toContain('That password is not right.');
    // The limit is reached (LIMIT tries per client): even the right password waits now.
    const limited = await givePassword(gw.app, alice.address, link.path, PASSWORD, { from, browser: false }).expect(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);

    // Guessing spread over many addresses: past LINK_LIMIT wrong tries on the link, each address that
    // guessed wrong waits even with the right password…
    for (let i = 1; i < LINK_LIMIT - 1; i += 1) {
      await givePassword(gw.app, alice.address, link.path, `guess ${i}`, { from: `203.0.113.${i}`, browser: false }).expect(401);
    }
    const guessed = await givePassword(gw.app, alice.address, link.path, PASSWORD, { from: '203.0.113.1', browser: false }).expect(429);
    expect(guessed.headers['retry-after']).toMatch(/^\d+$/);
    // …while a visitor who has not guessed wrong gets in.
    const right = await givePassword(gw.app, alice.address, link.path, PASSWORD, { from: '198.51.100.8' }).expect(303);
    expect(right.headers.location).toBe(link.path);
    const setCookie = (right.headers['set-cookie'] as unknown as string[])[0] as string;
    expect(setCookie).toMatch(new RegExp(`^pds-link=\\d+\\.[\\w-]+; Path=${link.path}; Max-Age=\\d+; HttpOnly; SameSite=Lax$`));
    const cookie = cookieFrom(right);
    const opened = await visit(gw.app, alice.address, link.path, { browser: true, cookie }).expect(200);
    expect(opened.text).toContain('<h1>tax.pdf</h1>');
    await visit(gw.app, alice.address, `${link.path}/download`, { cookie }).expect(303);
  });

  it("opens only its own link: another link's proof, or an altered one, does not", async () => {
    const other = await makeLink(gw, owner, { fileIds: [ids.notes], password: PASSWORD });
    const cookie = cookieFrom(await givePassword(gw.app, alice.address, other.path, PASSWORD, { from: '198.51.100.9' }).expect(303));
    await visit(gw.app, alice.address, other.path, { cookie }).expect(200);
    await visit(gw.app, alice.address, link.path, { cookie }).expect(401);
    const [name, value] = cookie.split('=') as [string, string];
    const [expiry, mac] = value.split('.') as [string, string];
    await visit(gw.app, alice.address, other.path, { cookie: `${name}=${Number(expiry) + 1000}.${mac}` }).expect(401);
  });

  it('takes a JSON body too, and refuses a request without a password with 400', async () => {
    const other = await makeLink(gw, owner, { fileIds: [ids.notes], password: PASSWORD });
    const json = await request(gw.app)
      .post(other.path)
      .set('Host', alice.address)
      .set('X-Forwarded-For', '198.51.100.10')
      .send({ password: PASSWORD })
      .expect(200);
    expect(json.body.files).toEqual([expect.objectContaining({ fileId: ids.notes })]);
    await request(gw.app).post(other.path).set('Host', alice.address).set('X-Forwarded-For', '198.51.100.11').send({}).expect(400);
    await request(gw.app).post(other.path).set('Host', alice.address).set('Content-Type', 'text/plain').send('password=x').expect(415);
  });
});

describe('the rules of a link, checked on every use', () => {
  it('expires: a page until then, a plain "expired" after', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.notes], expiresAt: new Date(gw.clock().getTime() + 3_600_000).toISOString() });
    await visit(gw.app, alice.address, link.path).expect(200);
    gw.clock.advance(3601);
    const page = await visit(gw.app, alice.address, link.path, { browser: true }).expect(410);
    expect(page.text).toContain('This link expired on');
    await visit(gw.app, alice.address, `${link.path}/download`).expect(410);
    const listed = (await call(gw, 'get', `/links?fileId=${ids.notes}`, owner).expect(200)).body as { id: string; state: string }[];
    expect(listed.find((l) => l.id === link.id)?.state).toBe('expired');
  });

  it('gives exactly its download limit under 10 concurrent downloads', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.tax], downloadLimit: LIMIT });
    const answers = await Promise.all(Array.from({ length: 10 }, () => visit(gw.app, alice.address, `${link.path}/download`)));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(LIMIT).fill(303), ...Array(10 - LIMIT).fill(410)]);
    expect((await links({ id: link.id }))[0]?.downloads).toBe(LIMIT);
    const page = await visit(gw.app, alice.address, link.path, { browser: true }).expect(410);
    expect(page.text).toContain('This link has been used as many times as the person who shared it allowed.');
  });

  it('is refused by another gateway of the cluster from the request after its revocation', async () => {
    const peer: Peer = startPeer(gw);
    try {
      const link = await makeLink(gw, owner, { fileIds: [ids.notes] });
      await visit(peer.gateway.app, alice.address, link.path).expect(200);
      await call(gw, 'delete', `/links/${link.id}`, owner).expect(200);
      const refused = await visit(peer.gateway.app, alice.address, link.path, { browser: true }).expect(404);
      expect(refused.text).toContain('This link was turned off by the person who shared it.');
      await visit(peer.gateway.app, alice.address, `${link.path}/download`).expect(404);
    } finally {
      await peer.close();
    }
  });

  it('stops with its file in the trash, and serves it again once restored', async () => {
    const file = await uploadFile(gw, owner, { name: 'binned.txt', source: 'console' }, Buffer.from('soon gone'));
    const link = await makeLink(gw, owner, { fileIds: [file.fileId] });
    await call(gw, 'delete', `/file/${file.fileId}`, owner).expect(200);
    await visit(gw.app, alice.address, link.path).expect(404);
    await visit(gw.app, alice.address, `${link.path}/download`).expect(404);
    await visit(gw.app, alice.address, `${link.path}/preview/${file.fileId}`).expect(404);
    await call(gw, 'post', `/trash/${file.fileId}/restore`, owner).expect(200);
    await visit(gw.app, alice.address, link.path).expect(200);
    await visit(gw.app, alice.address, `${link.path}/download`).expect(303);
  });

  it('drops a trashed file from a selection and keeps serving the others', async () => {
    const a = await uploadFile(gw, owner, { name: 'a.txt', source: 'console' });
    const b = await uploadFile(gw, owner, { name: 'b.txt', source: 'console' });
    const link = await makeLink(gw, owner, { fileIds: [a.fileId, b.fileId] });
    await call(gw, 'delete', `/file/${a.fileId}`, owner).expect(200);
    expect((await visit(gw.app, alice.address, link.path).expect(200)).body.files.map((f: { fileId: string }) => f.fileId)).toEqual([
      b.fileId,
    ]);
    await visit(gw.app, alice.address, `${link.path}/download/${a.fileId}`).expect(404);
  });

  it('stops while its instance is suspended or closing', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.notes] });
    for (const [state, status] of [
      ['suspended', 423],
      ['closing', 410],
    ] as const) {
      // …Many: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
      await gw.db.instance.updateMany({ where: { address: alice.address }, data: { state } });
      await gw.registry.changed(alice.address);
      try {
        await visit(gw.app, alice.address, link.path).expect(status);
        await visit(gw.app, alice.address, `${link.path}/download`).expect(status);
      } finally {
        await gw.db.instance.updateMany({ where: { address: alice.address }, data: { state: 'active' } });
        await gw.registry.changed(alice.address);
      }
    }
    await visit(gw.app, alice.address, link.path).expect(200);
  });
});

describe('what a link reveals', () => {
  it('is nothing for tokens it was not given, and no file but its own whatever the id (generated)', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids.tax] });
    const others = [ids.photo, ids.notes, ids.secret, ids.draft, 'nothing.txt', encodeURIComponent('../tax.pdf')];
    const noLink = { error: 'Not Found', message: 'There is no link at this address. Check that you have all of it.' };
    const noFile = { error: 'Not Found', message: 'This link shares no such file.' };
    const tokens = fc.oneof(
      fc.string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
        minLength: 32,
        maxLength: 32,
      }),
      fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
      // The real token, one character changed.
      fc.nat({ max: 31 }).map((i) => `${link.token.slice(0, i)}${link.token[i] === 'A' ? 'B' : 'A'}${link.token.slice(i + 1)}`),
    );
    await fc.assert(
      fc.asyncProperty(tokens, fc.constantFrom('', '/download', `/preview/${ids.tax}`, `/download/${ids.tax}`), async (token, rest) => {
        const res = await visit(gw.app, alice.address, `/s/${token}${rest}`);
        expect([token, res.status, res.body]).toEqual([token, 404, noLink]);
      }),
      { numRuns: 60, seed: 33 },
    );
    const ids_ = fc.oneof(fc.constantFrom(...others), fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent));
    await fc.assert(
      fc.asyncProperty(ids_, fc.constantFrom('download', 'preview'), async (fileId, route) => {
        const res = await visit(gw.app, alice.address, `${link.path}/${route}/${fileId}`);
        expect([fileId, res.status, res.body, res.headers.location]).toEqual([fileId, 404, noFile, undefined]);
      }),
      { numRuns: 60, seed: 34 },
    );
    const shown = await visit(gw.app, alice.address, link.path).expect(200);
    expect(shown.body.files.map((f: { fileId: string }) => f.fileId)).toEqual([ids.tax]);
    for (const other of ['photo.jpg', 'notes.txt', 'diary.txt', 'draft.txt']) expect(JSON.stringify(shown.body)).not.toContain(other);
  });
});

describe('the export', () => {
  it('holds each link without its secrets', async () => {
    const source = await instanceSource(
      new PortabilityRepository(gw.db),
      gw.blobStore,
      { id: await instanceId(alice.address), address: alice.address },
      gw.clock(),
    );
    const exported: Record<string, unknown>[] = [];
    for await (const link of source.links) exported.push(link);
    const rows = await links({ instanceId: await instanceId(alice.address) });
    expect(exported.map((link) => link.id)).toEqual(rows.map((row) => row.id).sort());
    const secrets = rows.flatMap((row) => [row.tokenHash, row.passwordHash ?? 'none']);
    const text = JSON.stringify(exported);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(exported.some((link) => link.hasPassword === true)).toBe(true);
  });
});
