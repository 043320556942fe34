import { fileIdStem } from '../src/files/slug';
import { signUp, type SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { call, STORES } from './files-support';

describe('the fileId slug', () => {
  it.each([
    ['test', 'testFile.png', 'testtestfile', '.png'],
    ['test', 'testFile', 'testtestfile', ''],
    ['rumpel', 'My Photo.JPG', 'rumpelmyphoto', '.jpg'],
    ['Rumpel App', 'Photo.PNG', 'rumpelappphoto', '.png'],
    ['rumpel', 'Café déjà vu.jpeg', 'rumpelcafedejavu', '.jpeg'],
    ['rumpel', 'archive.tar.gz', 'rumpelarchivetar', '.gz'],
    ['rumpel', '.hidden', 'rumpel', '.hidden'],
    ['rumpel', 'file.', 'rumpelfile', ''],
    ['my app', 'IMG_0001.png', 'myappimg_0001', '.png'],
    ['rumpel', 'photo-1.png', 'rumpelphoto1', '.png'],
    ['rumpel', '照片.png', 'rumpel', '.png'],
    ['rumpel', 'photo.€', 'rumpelphoto', ''],
    ['照片', '照片', 'file', ''],
  ])('%s + %s → base %s, ext %s', (source, name, base, ext) => {
    expect(fileIdStem(source, name)).toEqual({ base, ext });
  });
});

describe.each(STORES)('fileId allocation on the %s store', (store) => {
  const { gw, owners } = useGateway({ store, owners: ['alice'] });
  const { alice } = owners;

  const upload = (as: SignedUp, name: string, source = 'test') =>
    call(gw, 'post', '/upload', { address: as.address, token: as.token }, { name, source });

  it('appends -N one above the highest used, also for names with spaces', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(alice, 'testFile.png')).body.fileId);
    expect(ids).toEqual(['testtestfile.png', 'testtestfile-1.png', 'testtestfile-2.png']);
    expect((await upload(alice, 'testFile')).body.fileId).toBe('testtestfile');
    const spaced = [(await upload(alice, 'My Photo.JPG', 'rumpel')).body, (await upload(alice, 'My Photo.JPG', 'rumpel')).body];
    expect(spaced.map((f) => f.fileId)).toEqual(['rumpelmyphoto.jpg', 'rumpelmyphoto-1.jpg']);
    // Nothing was overwritten: both files keep their own rows.
    expect(await gw.db.file.count({ where: { name: 'My Photo.JPG' } })).toBe(2);
  });

  it('gives 50 concurrent uploads of one name 50 distinct ids', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => upload(alice, 'same.txt', 'burst')));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const ids = results.map((r) => r.body.fileId as string);
    expect(new Set(ids).size).toBe(50);
    const expected = ['burstsame.txt', ...Array.from({ length: 49 }, (_, i) => `burstsame-${i + 1}.txt`)];
    expect([...ids].sort()).toEqual(expected.sort());
    expect(await gw.db.file.count({ where: { name: 'same.txt' } })).toBe(50);
    expect(await gw.db.filePermission.count({ where: { fileId: { in: ids } } })).toBe(50);
  });

  it('numbers each instance on its own', async () => {
    const bob = await signUp(gw.app, 'bob');
    expect((await upload(bob, 'testFile.png')).body.fileId).toBe('testtestfile.png');
  });
});
