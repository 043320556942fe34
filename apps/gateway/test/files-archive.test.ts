// Zip downloads of a selection on both stores, as a browser gets them: POST /files/archive answers a
// signed, expiring address; its GET streams a zip of the selected files the caller may read, each once
// under a name of its own.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { addUser, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, startFilesGateway, STORES, unzip, uploadFile, type As } from './files-support';

/** GETs a download address at the gateway (its host is the instance's): status, headers and bytes. */
async function download(gw: TestGateway, address: string) {
  const url = new URL(address);
  return request(gw.app)
    .get(url.pathname)
    .set('Host', url.host)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

describe.each(STORES)('on the %s store', (store) => {
  let gw: TestGateway;
  let alice: SignedUp;
  let owner: As;
  let bob: As;
  let bobId: string;
  const bytes = {
    notes: Buffer.from('shopping list: bread, milk, '.repeat(100)),
    again: Buffer.from('another file called notes.txt'),
    photo: randomBytes(5 * 1024 * 1024 + 17),
    odd: Buffer.from('a name with a slash'),
  };
  const ids: Record<keyof typeof bytes, string> = { notes: '', again: '', photo: '', odd: '' };

  beforeAll(async () => {
    gw = await startFilesGateway(store);
    alice = await signUp(gw.app, 'alice');
    owner = { address: alice.address, token: alice.token };
    const added = await addUser(gw.app, alice, 'bob');
    bob = { address: alice.address, token: added.token };
    bobId = added.userId;
    ids.notes = (await uploadFile(gw, owner, { name: 'notes.txt', source: 'console' }, bytes.notes)).fileId;
    ids.again = (await uploadFile(gw, owner, { name: 'notes.txt', source: 'console' }, bytes.again)).fileId;
    ids.photo = (await uploadFile(gw, owner, { name: 'photo.jpg', source: 'camera' }, bytes.photo)).fileId;
    ids.odd = (await uploadFile(gw, owner, { name: '../etc/passwd', source: 'console' }, bytes.odd)).fileId;
  });
  afterAll(() => gw.close());

  it('zips the selection, each file under a name of its own, streamed from the store', async () => {
    const made = await call(gw, 'post', '/archive', owner, { fileIds: [ids.notes, ids.again, ids.photo, ids.odd] });
    expect(made.status).toBe(200);
    expect(made.body).toEqual({
      url: expect.stringMatching(/^http:\/\/alice\.pds\.test(:\d+)?\/api\/v2\.6\/files\/archive\/[\w-]{32}$/),
      name: expect.stringMatching(/^files-\d{4}-\d{2}-\d{2}\.zip$/),
    });
    const res = await download(gw, made.body.url);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${made.body.name}"`);
    const entries = await unzip(res.body as Buffer);
    expect([...entries.keys()]).toEqual(['notes.txt', 'notes (2).txt', 'photo.jpg', '.._etc_passwd']);
    expect(entries.get('notes.txt')?.equals(bytes.notes)).toBe(true);
    expect(entries.get('notes (2).txt')?.equals(bytes.again)).toBe(true);
    expect(entries.get('photo.jpg')?.equals(bytes.photo)).toBe(true);
    expect(entries.get('.._etc_passwd')?.equals(bytes.odd)).toBe(true);
    // The address serves again while it lives (a browser may retry).
    expect((await download(gw, made.body.url)).status).toBe(200);
  });

  it('leaves out what the caller may not read, checks again at the download, and answers 404 when nothing is left', async () => {
    expect((await call(gw, 'get', `/allowAccess/${ids.notes}/${bobId}?content=true`, owner)).status).toBe(200);
    expect((await call(gw, 'get', `/allowAccess/${ids.again}/${bobId}?content=false`, owner)).status).toBe(200);
    const made = await call(gw, 'post', '/archive', bob, { fileIds: [ids.notes, ids.again, ids.photo, 'nothing.txt'] });
    expect(made.status).toBe(200);
    expect([...(await unzip((await download(gw, made.body.url)).body as Buffer)).keys()]).toEqual(['notes.txt']);

    expect((await call(gw, 'get', `/restrictAccess/${ids.notes}/${bobId}`, owner)).status).toBe(200);
    const after = await download(gw, made.body.url);
    expect(after.status).toBe(200);
    expect([...(await unzip(after.body as Buffer)).keys()]).toEqual([]);

    const none = await call(gw, 'post', '/archive', bob, { fileIds: [ids.again, ids.photo] });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('Not Found');
  });

  it('refuses an address that is none, or another instance’s', async () => {
    const made = await call(gw, 'post', '/archive', owner, { fileIds: [ids.notes] });
    const url = new URL(made.body.url);
    for (const path of [`${url.pathname.slice(0, -4)}AAAA`, '/api/v2.6/files/archive/short']) {
      const res = await request(gw.app).get(path).set('Host', alice.address);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Forbidden', message: 'The download address is invalid or has expired' });
    }
    const carol = await signUp(gw.app, 'carol');
    expect((await request(gw.app).get(url.pathname).set('Host', carol.address)).status).toBe(403);
  });

  it('answers 400 for a selection that is empty, too large or no list, and 401 without a token', async () => {
    for (const body of [{ fileIds: [] }, { fileIds: Array.from({ length: 1001 }, (_, i) => `f${i}.txt`) }, { fileIds: 'notes.txt' }, {}]) {
      const res = await call(gw, 'post', '/archive', owner, body);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('fileIds');
    }
    expect((await call(gw, 'post', '/archive', { address: alice.address }, { fileIds: [ids.notes] })).status).toBe(401);
  });
});

it('lets a download address expire with the signed addresses', async () => {
  const gw = await startFilesGateway('local', { SIGNED_URL_TTL: '1' });
  try {
    const alice = await signUp(gw.app, 'alice');
    const owner = { address: alice.address, token: alice.token };
    const { fileId } = await uploadFile(gw, owner, { name: 'soon.txt', source: 'console' });
    const made = await call(gw, 'post', '/archive', owner, { fileIds: [fileId] });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const url = new URL(made.body.url);
    const res = await request(gw.app).get(url.pathname).set('Host', url.host);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('The download address is invalid or has expired');
  } finally {
    await gw.close();
  }
});
