import { objectKey, trashKey } from '@pds/storage';
import { addUser, signUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { call, fileTables, getBytes, putBytes, SSE, STORES, uploadFile } from './files-support';

/** One character changed in the signature (S3) or in the signed token (local store's last path segment). */
function tamper(address: string): string {
  const url = new URL(address);
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1);
  const signature = url.searchParams.get('X-Amz-Signature');
  if (signature) url.searchParams.set('X-Amz-Signature', flip(signature, 10));
  else url.pathname = flip(url.pathname, url.pathname.length - 10);
  return url.toString();
}

describe.each(STORES)('Files API on the %s store', (store) => {
  const { gw, owners, users } = useGateway({ store, owners: ['alice'], users: { bob: 'alice' } });
  const { alice } = owners;
  const { bob } = users;

  const owner = () => ({ address: alice.address, token: alice.token });
  const asBob = () => ({ address: alice.address, token: bob.token });

  describe('upload', () => {
    it('answers the New record with the uploader permission and a signed PUT address', async () => {
      const res = await call(gw, 'post', '/upload', asBob(), {
        name: 'testFile.png',
        source: 'test',
        tags: ['a', 'b'],
        title: 'A title',
        fileId: 'chosen-by-client',
        status: { status: 'Completed', size: 5 },
        contentPublic: true,
        permissions: [{ userId: alice.userId, contentReadable: false }],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        fileId: 'testtestfile.png',
        name: 'testFile.png',
        source: 'test',
        tags: ['a', 'b'],
        title: 'A title',
        dateCreated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        lastUpdated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        status: { status: 'New' },
        contentUrl: expect.stringMatching(/^https?:\/\//),
        contentPublic: false,
        permissions: [{ userId: bob.userId, contentReadable: true }],
      });
      expect(res.body).not.toHaveProperty('description');
    });

    it('keeps a given dateCreated (ISO, Unix seconds or milliseconds) and sets lastUpdated to now', async () => {
      gw.clock.advance(7);
      const now = gw.clock().toISOString();
      for (const [given, expected] of [
        ['2020-05-06T07:08:09.123Z', '2020-05-06T07:08:09.123Z'],
        [1_600_000_000, '2020-09-13T12:26:40.000Z'],
        [1_600_000_000_123, '2020-09-13T12:26:40.123Z'],
      ] as const) {
        const res = await call(gw, 'post', '/upload', owner(), { name: 'd.txt', source: 'dates', dateCreated: given, lastUpdated: 0 });
        expect(res.status).toBe(200);
        expect(res.body.dateCreated).toBe(expected);
        expect(res.body.lastUpdated).toBe(now);
      }
      const plain = await call(gw, 'post', '/upload', owner(), { name: 'd.txt', source: 'dates' });
      expect(plain.body.dateCreated).toBe(now);
    });

    it.each([
      ['name', 'missing', { source: 's' }],
      ['source', 'missing', { name: 'n' }],
      ['name', 'empty', { name: '', source: 's' }],
      ['name', 'over 1024', { name: 'x'.repeat(1025), source: 's' }],
      ['source', 'over 256', { name: 'n', source: 's'.repeat(257) }],
      ['title', 'over 1024', { name: 'n', source: 's', title: 't'.repeat(1025) }],
      ['description', 'over 16 KiB', { name: 'n', source: 's', description: 'd'.repeat(16 * 1024 + 1) }],
      ['tags', '65 tags', { name: 'n', source: 's', tags: Array.from({ length: 65 }, (_, i) => `t${i}`) }],
      ['tags.0', 'a tag over 128', { name: 'n', source: 's', tags: ['t'.repeat(129)] }],
      ['dateCreated', 'not a date', { name: 'n', source: 's', dateCreated: 'yesterday' }],
      ['dateCreated', 'past year 9999', { name: 'n', source: 's', dateCreated: 1e20 }],
      ['dateCreated', 'one second before year 1', { name: 'n', source: 's', dateCreated: -62135596801 }],
    ])('answers 400 naming %s (%s) and writes nothing', async (field, _why, body) => {
      const before = await fileTables(gw);
      const res = await call(gw, 'post', '/upload', owner(), body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Bad Request');
      expect(res.body.message).toMatch(new RegExp(`(^|; )${field.replace('.', '\\.')}: `));
      expect(await fileTables(gw)).toEqual(before);
    });

    it('answers 401 without a token', async () => {
      const res = await call(gw, 'post', '/upload', { address: alice.address }, { name: 'n', source: 's' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
    });
  });

  describe('bytes and completion', () => {
    it('round-trips the exact bytes and completes with the size', async () => {
      const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
      const started = await call(gw, 'post', '/upload', owner(), { name: 'blob.bin', source: 'rt' });
      expect(await putBytes(gw, started.body.contentUrl, bytes)).toBe(200);
      gw.clock.advance(10);
      const completed = await call(gw, 'put', `/file/${started.body.fileId}/complete`, owner());
      expect(completed.status).toBe(200);
      expect(completed.body.status).toEqual({ status: 'Completed', size: bytes.length });
      expect(Date.parse(completed.body.lastUpdated)).toBeGreaterThan(Date.parse(started.body.lastUpdated));
      expect(completed.body.dateCreated).toBe(started.body.dateCreated);

      const content = await call(gw, 'get', `/content/${started.body.fileId}`, owner());
      expect(content.status).toBe(303);
      const fetched = await getBytes(gw, content.headers.location as string);
      expect(fetched.status).toBe(200);
      expect(fetched.body.equals(bytes)).toBe(true);

      // Completing again is harmless: same record, size re-read.
      const again = await call(gw, 'put', `/file/${started.body.fileId}/complete`, owner());
      expect(again.status).toBe(200);
      expect(again.body.status).toEqual({ status: 'Completed', size: bytes.length });
    });

    it('answers 409 when the bytes were never sent, and the file stays New', async () => {
      const started = await call(gw, 'post', '/upload', owner(), { name: 'never.txt', source: 'rt' });
      const res = await call(gw, 'put', `/file/${started.body.fileId}/complete`, owner());
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'Conflict', message: `File ${started.body.fileId} has not been uploaded` });
      expect((await call(gw, 'get', `/file/${started.body.fileId}`, owner())).body.status).toEqual({ status: 'New' });
    });

    it('refuses bytes without the encryption header, and stores nothing', async () => {
      const started = await call(gw, 'post', '/upload', owner(), { name: 'plain.txt', source: 'rt' });
      const status = await putBytes(gw, started.body.contentUrl, Buffer.from('x'), {});
      expect(store === 'local' ? status === 400 : status >= 400 && status < 500).toBe(true);
      expect(await gw.blobStore.stat(objectKey(alice.address, started.body.fileId))).toBeNull();
    });

    it('refuses a tampered address with 403, and stores nothing', async () => {
      const started = await call(gw, 'post', '/upload', owner(), { name: 'tampered.txt', source: 'rt' });
      const tampered = tamper(started.body.contentUrl);
      expect(tampered).not.toBe(started.body.contentUrl);
      expect(await putBytes(gw, tampered, Buffer.from('x'))).toBe(403);
      expect(await gw.blobStore.stat(objectKey(alice.address, started.body.fileId))).toBeNull();
    });

    it('answers 404 to completion of a missing file', async () => {
      const res = await call(gw, 'put', '/file/nothing-here.png/complete', owner());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not Found', message: 'File nothing-here.png not found' });
    });
  });

  describe('get and content', () => {
    it('lists permissions and a content address for the owner only', async () => {
      const file = await uploadFile(gw, asBob(), { name: 'g.txt', source: 'get' });
      const mine = await call(gw, 'get', `/file/${file.fileId}`, owner());
      expect(mine.body.permissions).toEqual([{ userId: bob.userId, contentReadable: true }]);
      expect(mine.body.contentUrl).toEqual(expect.any(String));
      const bobs = await call(gw, 'get', `/file/${file.fileId}`, asBob());
      expect(bobs.status).toBe(200);
      expect(bobs.body).not.toHaveProperty('permissions');
      expect(bobs.body.contentUrl).toEqual(expect.any(String));
    });

    it('gives no content address for a New file, even to the owner', async () => {
      const started = await call(gw, 'post', '/upload', owner(), { name: 'new.txt', source: 'get' });
      const res = await call(gw, 'get', `/file/${started.body.fileId}`, owner());
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('contentUrl');
      expect((await call(gw, 'get', `/content/${started.body.fileId}`, owner())).status).toBe(404);
    });

    it('serves a public file without a token, and stops when it is made private again', async () => {
      const file = await uploadFile(gw, owner(), { name: 'pub.txt', source: 'get' }, Buffer.from('public bytes'));
      const anon = { address: alice.address };
      expect((await call(gw, 'get', `/content/${file.fileId}`, anon)).status).toBe(404);

      gw.clock.advance(5);
      const made = await call(gw, 'get', `/allowAccessPublic/${file.fileId}`, owner());
      expect(made.status).toBe(200);
      expect(made.body.contentPublic).toBe(true);
      expect(made.body.lastUpdated).not.toBe(file.lastUpdated);
      const { lastUpdated: _a, contentPublic: _b, contentUrl: _c, ...rest } = made.body;
      const { lastUpdated: _d, contentPublic: _e, contentUrl: _f, ...before } = file;
      expect(rest).toEqual(before);

      const content = await call(gw, 'get', `/content/${file.fileId}`, anon);
      expect(content.status).toBe(303);
      expect((await getBytes(gw, content.headers.location as string)).body.toString()).toBe('public bytes');

      const priv = await call(gw, 'get', `/restrictAccessPublic/${file.fileId}`, owner());
      expect(priv.body.contentPublic).toBe(false);
      const after = await call(gw, 'get', `/content/${file.fileId}`, anon);
      expect(after.status).toBe(404);
      expect(after.body).toEqual({ error: 'Not Found', message: `File ${file.fileId} not found` });
    });
  });

  describe('delete', () => {
    it('marks the file Deleted and moves it to the trash (bytes removed when purged), and may be repeated', async () => {
      const file = await uploadFile(gw, owner(), { name: 'del.txt', source: 'del' });
      gw.clock.advance(5);
      const res = await call(gw, 'delete', `/file/${file.fileId}`, owner());
      expect(res.status).toBe(200);
      expect(res.body.status).toEqual({ status: 'Deleted' });
      expect(res.body.lastUpdated).not.toBe(file.lastUpdated);
      expect(res.body.name).toBe('del.txt');
      expect((await call(gw, 'get', `/content/${file.fileId}`, owner())).status).toBe(404);
      expect((await call(gw, 'delete', `/file/${file.fileId}`, owner())).status).toBe(200);
      // The bytes wait under their trash key (files-quota-trash.test.ts) until purged.
      const key = objectKey(alice.address, file.fileId);
      expect([await gw.blobStore.stat(key), await gw.blobStore.stat(trashKey(key))]).toEqual([null, 5]);
      expect((await call(gw, 'delete', `/trash/${file.fileId}`, owner())).status).toBe(200);
      expect([await gw.blobStore.stat(key), await gw.blobStore.stat(trashKey(key))]).toEqual([null, null]);
    });

    it('deletes a file that is still New', async () => {
      const started = await call(gw, 'post', '/upload', owner(), { name: 'fresh.txt', source: 'del' });
      const res = await call(gw, 'delete', `/file/${started.body.fileId}`, owner());
      expect(res.status).toBe(200);
      expect(res.body.status).toEqual({ status: 'Deleted' });
    });

    it('refuses the uploader (403) and changes nothing', async () => {
      const file = await uploadFile(gw, asBob(), { name: 'keep.txt', source: 'del' });
      const before = await fileTables(gw);
      const res = await call(gw, 'delete', `/file/${file.fileId}`, asBob());
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('Forbidden');
      expect(await fileTables(gw)).toEqual(before);
      expect(await gw.blobStore.stat(objectKey(alice.address, file.fileId))).toBe(5);
    });
  });

  describe('search', () => {
    let seeded: Record<string, string>;
    beforeAll(async () => {
      seeded = {};
      const specs = [
        ['s1', { name: 'photo.png', source: 'srch', tags: ['tag1'], description: 'A rather short description' }],
        ['s2', { name: 'photo.png', source: 'srch', tags: ['tag1', 'tag2'], description: 'A long description' }],
        [
          's3',
          {
            name: 'other.png',
            source: 'srch',
            tags: ['tag1', 'tag2', 'tag3'],
            title: 'Holiday Facebook pictures',
            description: 'A really long description than most people would use for their photos',
          },
        ],
      ] as const;
      for (const [key, meta] of specs) {
        gw.clock.advance(1);
        seeded[key] = (await uploadFile(gw, owner(), meta)).fileId;
      }
      gw.clock.advance(1);
      seeded.deleted = (await uploadFile(gw, owner(), { name: 'gone.png', source: 'srch', tags: ['tag1'] })).fileId;
      await call(gw, 'delete', `/file/${seeded.deleted}`, owner()).expect(200);
    });

    const ids = async (template: object, query = '') => {
      const res = await call(gw, 'post', `/search${query}`, owner(), template);
      expect(res.status).toBe(200);
      return (res.body as { fileId: string }[]).map((f) => f.fileId);
    };
    const s = (...keys: string[]) => keys.map((k) => seeded[k]);

    it.each([
      [{ source: 'srch' }, ['s3', 's2', 's1']],
      [{ source: 'srch', name: 'photo.png' }, ['s2', 's1']],
      [{ source: 'srch', name: '' }, ['s3', 's2', 's1']],
      [{ source: 'srch', tags: ['tag1'] }, ['s3', 's2', 's1']],
      [{ source: 'srch', tags: ['tag1', 'tag2'] }, ['s3', 's2']],
      [{ source: 'srch', tags: ['tag3'] }, ['s3']],
      [{ source: 'srch', description: 'long' }, ['s3', 's2']],
      [{ source: 'srch', description: 'short' }, ['s1']],
      [{ source: 'srch', description: 'A DESCRIPTION' }, ['s3', 's2', 's1']],
      [{ source: 'srch', description: 'descr' }, ['s3', 's2', 's1']],
      [{ source: 'srch', title: 'face' }, ['s3']],
      [{ source: 'srch', title: 'holiday pictures' }, ['s3']],
      [{ source: 'srch', title: 'work' }, []],
      [{ source: 'srch', status: { status: 'Completed', size: 0 } }, ['s3', 's2', 's1']],
      [{ source: 'srch', status: { status: 'Deleted' } }, ['deleted']],
      [{ source: 'srch', fileId: 'photo.png' }, []],
      [{ source: 'sr' }, []],
    ])('template %j finds %j, newest first', async (template, expected) => {
      expect(await ids(template)).toEqual(s(...expected));
    });

    it('finds by exact fileId', async () => {
      expect(await ids({ fileId: seeded.s2 })).toEqual(s('s2'));
    });

    it('pages with take and skip', async () => {
      expect(await ids({ source: 'srch' }, '?take=2')).toEqual(s('s3', 's2'));
      expect(await ids({ source: 'srch' }, '?take=2&skip=2')).toEqual(s('s1'));
      expect(await ids({ source: 'srch' }, '?skip=3')).toEqual([]);
    });

    it.each(['take=0', 'take=10001', 'skip=-1', 'take=abc'])('answers 400 for ?%s', async (query) => {
      const res = await call(gw, 'post', `/search?${query}`, owner(), { source: 'srch' });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^(take|skip): /);
    });

    it('returns only what a user may see, without permissions', async () => {
      expect((await call(gw, 'post', '/search', asBob(), { source: 'srch' })).body).toEqual([]);
      await call(gw, 'get', `/allowAccess/${seeded.s1}/${bob.userId}`, owner()).expect(200);
      const res = await call(gw, 'post', '/search', asBob(), { source: 'srch' });
      expect(res.body).toHaveLength(1);
      expect(res.body[0].fileId).toBe(seeded.s1);
      expect(res.body[0]).not.toHaveProperty('permissions');
      expect(res.body[0]).not.toHaveProperty('contentUrl');
    });

    it('renders each hit byte for byte as a GET of the file renders it', async () => {
      // A New file at the earliest date the API takes, and one with every optional field at the latest date the API takes.
      const draft = await call(gw, 'post', '/upload', owner(), {
        name: 'draft.txt',
        source: 'srch-view',
        dateCreated: '0001-01-01T00:00:00Z',
      });
      expect(draft.status).toBe(200);
      gw.clock.advance(1);
      const full = await uploadFile(gw, owner(), {
        name: 'full "quoted" ü.txt',
        source: 'srch-view',
        tags: ['a', 'b\\c'],
        title: 'Title\twith a tab',
        description: 'line\nbreak',
        dateCreated: '9999-12-31T23:59:59.999Z',
      });
      await call(gw, 'get', `/allowAccess/${full.fileId}/${bob.userId}?content=true`, owner()).expect(200);
      // Content addresses are signed with the time of the call: only their presence is compared.
      const sameAddress = (text: string) => text.replace(/"contentUrl":"[^"]+"/g, '"contentUrl":"…"');
      const views = [
        [owner(), [full.fileId, draft.body.fileId]],
        [asBob(), [full.fileId]],
      ] as const;
      for (const [as, expected] of views) {
        const hits = await call(gw, 'post', '/search', as, { source: 'srch-view' });
        expect(hits.status).toBe(200);
        const ids = (hits.body as { fileId: string }[]).map((f) => f.fileId);
        expect(ids).toEqual(expected);
        const gets = await Promise.all(ids.map((id) => call(gw, 'get', `/file/${id}`, as)));
        expect(sameAddress(hits.text)).toBe(sameAddress(`[${gets.map((g) => g.text).join(',')}]`));
      }
    });
  });

  describe('bulk access', () => {
    it('grants and revokes on every matching file in one call', async () => {
      const carol = await addUser(gw.app, alice, 'carol');
      const a = await uploadFile(gw, owner(), { name: 'b1.txt', source: 'bulk', tags: ['x', 'y'] });
      const b = await uploadFile(gw, owner(), { name: 'b2.txt', source: 'bulk', tags: ['x'] });
      const granted = await call(gw, 'post', `/allowAccess/${carol.userId}?content=true`, owner(), { source: 'bulk', tags: ['x'] });
      expect(granted.status).toBe(200);
      expect(granted.body.map((f: { fileId: string }) => f.fileId).sort()).toEqual([a.fileId, b.fileId].sort());
      for (const f of granted.body) expect(f.permissions).toContainEqual({ userId: carol.userId, contentReadable: true });

      const revoked = await call(gw, 'post', `/restrictAccess/${carol.userId}`, owner(), { source: 'bulk', tags: ['x', 'y'] });
      expect(revoked.status).toBe(200);
      expect(revoked.body.map((f: { fileId: string }) => f.fileId)).toEqual([a.fileId]);
      expect(revoked.body[0].permissions).not.toContainEqual(expect.objectContaining({ userId: carol.userId }));
      const search = await call(gw, 'post', '/search', { address: alice.address, token: carol.token }, { source: 'bulk' });
      expect(search.body.map((f: { fileId: string }) => f.fileId)).toEqual([b.fileId]);
    });

    it('answers 404 naming an unknown user and grants nothing', async () => {
      const before = await fileTables(gw);
      const res = await call(gw, 'post', '/allowAccess/7d1e4d47-2b0e-4c57-9d89-4f0b6c1f3a10', owner(), { source: 'bulk' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('User 7d1e4d47-2b0e-4c57-9d89-4f0b6c1f3a10 not found');
      expect(await fileTables(gw)).toEqual(before);
    });
  });
});

describe.each(STORES)('signed addresses on the %s store expire', (store) => {
  const { gw } = useGateway({ store, env: { SIGNED_URL_TTL: '1' } });

  it('refuses a PUT after the address expired (403), and stores nothing', async () => {
    const alice = await signUp(gw.app, 'alice');
    const as = { address: alice.address, token: alice.token };
    const started = await call(gw, 'post', '/upload', as, { name: 'late.txt', source: 'exp' });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await putBytes(gw, started.body.contentUrl, Buffer.from('late'), SSE)).toBe(403);
    expect(await gw.blobStore.stat(objectKey(alice.address, started.body.fileId))).toBeNull();
  });
});
