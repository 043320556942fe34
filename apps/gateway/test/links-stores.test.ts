// Share links on both stores (issue 33), as someone without an account uses them: a link to one file
// downloads its bytes unchanged under the file's own name through a short signed address; a link to
// three downloads them as one zip, each entry's bytes unchanged; a preview is sent inline with the type
// its name says.
import { randomBytes } from 'node:crypto';
import { signUp, type TestGateway } from '../../../test/support/gateway';
import { getBytes, startFilesGateway, STORES, unzip, uploadFile, type As } from './files-support';
import { bytesOf, makeLink, sha256, visit } from './links-support';

describe.each(STORES)('share links on the %s store', (store) => {
  let gw: TestGateway;
  let owner: As;
  const files = {
    'tax 2025.pdf': randomBytes(700_001),
    'photo.jpg': randomBytes(2 * 1024 * 1024 + 3),
    'notes.txt': Buffer.from('for the accountant\n'.repeat(200)),
  };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    gw = await startFilesGateway(store);
    const alice = await signUp(gw.app, 'alice');
    owner = { address: alice.address, token: alice.token };
    for (const [name, bytes] of Object.entries(files)) ids[name] = (await uploadFile(gw, owner, { name, source: 'console' }, bytes)).fileId;
  });
  afterAll(() => gw?.close());

  it('gives one file, byte for byte, under its own name, through a short signed address', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids['tax 2025.pdf']] });
    const res = await visit(gw.app, owner.address, `${link.path}/download`, { browser: true }).expect(303);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const location = res.headers.location as string;
    // The store's address, not the link's: the bytes never pass through the link's routes.
    expect(location).not.toContain(link.token);
    const got = await getBytes(gw, location);
    expect(got.status).toBe(200);
    expect(sha256(got.body)).toBe(sha256(files['tax 2025.pdf']));
  });

  it('gives three files as one zip, each entry byte for byte, and one of them alone', async () => {
    const link = await makeLink(gw, owner, { fileIds: Object.values(ids) });
    const zip = await bytesOf(visit(gw.app, owner.address, `${link.path}/download`, { browser: true })).expect(200);
    expect(zip.headers['content-type']).toBe('application/zip');
    expect(zip.headers['content-disposition']).toMatch(/^attachment; filename="files-\d{4}-\d{2}-\d{2}\.zip"$/);
    const entries = await unzip(zip.body as Buffer);
    expect(Object.fromEntries([...entries].map(([name, bytes]) => [name, sha256(bytes)]))).toEqual(
      Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, sha256(bytes)])),
    );

    const one = await visit(gw.app, owner.address, `${link.path}/download/${encodeURIComponent(ids['photo.jpg'] as string)}`).expect(303);
    expect(sha256((await getBytes(gw, one.headers.location as string)).body)).toBe(sha256(files['photo.jpg']));
  });

  it('names the download and sends a preview inline with the type its name says', async () => {
    const link = await makeLink(gw, owner, { fileIds: [ids['tax 2025.pdf'], ids['notes.txt']] });
    const download = await visit(gw.app, owner.address, `${link.path}/download/${ids['tax 2025.pdf']}`).expect(303);
    const saved = await fetchHeaders(gw, download.headers.location as string);
    expect(saved).toEqual({
      status: 200,
      type: 'application/pdf',
      disposition: `attachment; filename="tax 2025.pdf"; filename*=UTF-8''tax%202025.pdf`,
    });
    const preview = await visit(gw.app, owner.address, `${link.path}/preview/${ids['notes.txt']}`).expect(303);
    expect(await fetchHeaders(gw, preview.headers.location as string)).toEqual({
      status: 200,
      type: 'text/plain; charset=utf-8',
      disposition: `inline; filename="notes.txt"; filename*=UTF-8''notes.txt`,
    });
  });
});

/** The status, Content-Type and Content-Disposition a signed address answers with. */
async function fetchHeaders(gw: TestGateway, address: string) {
  const url = new URL(address);
  if (url.hostname.endsWith('.pds.test')) {
    const res = await bytesOf(visit(gw.app, url.host, url.pathname + url.search));
    return { status: res.status, type: res.headers['content-type'], disposition: res.headers['content-disposition'] };
  }
  const res = await fetch(address);
  await res.arrayBuffer();
  return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition') };
}
