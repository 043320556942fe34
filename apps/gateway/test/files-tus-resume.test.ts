// A 256 MiB upload through tus-js-client, on each store, cut five times at random offsets: the client
// process killed (a new one finds the upload by the file's fingerprint and resumes it), or every
// connection dropped by a proxy in front of the gateway (the same client retries and resumes). It
// completes through step 3 with the bytes' SHA-256, and the clients sent barely more than the file.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { objectKey } from '@pds/storage';
import { CuttingProxy } from '../../../test/support/cutting-proxy';
import { signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, startFilesGateway, STORES } from './files-support';
import { TUS } from './tus-support';

jest.setTimeout(300_000);

const MiB = 1024 * 1024;
const SIZE = 256 * MiB;
const CUTS = ['kill', 'drop', 'kill', 'drop', 'kill'] as const;
/**
 * What one cut may lose: the bytes the kernel may hold between the proxy and the gateway when the
 * connection goes (the proxy's send buffer and the gateway's receive buffer at their largest, which a
 * gateway slow to read on a loaded machine fills).
 */
const IN_FLIGHT = ['tcp_wmem', 'tcp_rmem']
  .map((name) => Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]))
  .reduce((sum, bytes) => sum + bytes, 0);
const REPO = path.resolve(__dirname, '../../..');

/** A file of random bytes on disk, and its SHA-256. */
async function randomFile(file: string, size: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let written = 0; written < size; written += 4 * MiB) {
    const chunk = randomBytes(Math.min(4 * MiB, size - written));
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return hash.digest('hex');
}

/** Random offsets, in order, at least a tenth of the file apart and clear of its ends. */
function cutOffsets(count: number, size: number): number[] {
  const slot = Math.floor(size / (count + 1));
  return Array.from({ length: count }, (_, i) => slot * (i + 1) + randomInt(-Math.floor(slot / 3), Math.floor(slot / 3)));
}

/** One tus-js-client process (tus-client.ts): resolves each progress line and the end through callbacks. */
function startClient(
  settings: object,
  on: { progress(sent: number): void },
): { child: ChildProcess; done: Promise<{ success?: boolean; error?: string }> } {
  const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', path.join(__dirname, 'tus-client.ts')], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TUS_CLIENT: JSON.stringify(settings) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  const done = new Promise<{ success?: boolean; error?: string }>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const event = JSON.parse(buffered.slice(0, end)) as { progress?: number; success?: boolean; error?: string };
        buffered = buffered.slice(end + 1);
        if (event.progress !== undefined) on.progress(event.progress);
        else resolve(event);
      }
    });
    child.once('exit', (code, signal) => resolve({ error: `exited (${signal ?? code})` }));
  });
  return { child, done };
}

/** The upload's stored offset once no request holds it (the one cut short has recorded what it got). */
async function settledOffset(gw: TestGateway, fileId: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const upload = await gw.db.fileUpload.findFirstOrThrow({ where: { fileId } });
    if (upload.lease === null || Date.now() > deadline) return Number(upload.offset);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(STORES)('a 256 MiB resumable upload on the %s store', (store) => {
  let gw: TestGateway;
  let server: http.Server;
  let proxy: CuttingProxy;
  let alice: SignedUp;
  let dir: string;

  beforeAll(async () => {
    proxy = await CuttingProxy.start();
    // The instance's public address is the proxy's: every address the gateway hands out goes through it.
    gw = await startFilesGateway(store, { PUBLIC_PORT: String(proxy.port), MAX_UPLOAD_BYTES: String(SIZE) });
    server = http.createServer(gw.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy.forwardTo((server.address() as AddressInfo).port);
    alice = await signUp(gw.app, 'alice');
    dir = mkdtempSync(path.join(os.tmpdir(), 'tus-resume-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('survives the client killed and the network dropped at random offsets, and completes with the same SHA-256', async () => {
    const started = Date.now();
    const file = path.join(dir, 'video.bin');
    const sha256 = await randomFile(file, SIZE);
    const { fileId } = (await call(gw, 'post', '/upload', alice, { name: 'video.bin', source: 'phone' }).expect(200)).body as {
      fileId: string;
    };
    const settings = {
      endpoint: `http://${alice.address}:${proxy.port}${TUS}`,
      file,
      urlStorage: path.join(dir, 'uploads.json'),
      token: alice.token,
      fileId,
      every: MiB,
    };
    const offsets = cutOffsets(CUTS.length, SIZE);
    const stored: number[] = [];
    let next = 0;
    let client: ReturnType<typeof startClient>;
    let killed: (() => void) | undefined;
    const progress = (sent: number) => {
      const cut = CUTS[next];
      if (cut === undefined || sent < (offsets[next] as number)) return;
      next++;
      if (cut === 'drop') proxy.cut();
      else {
        client.child.kill('SIGKILL');
        killed?.();
      }
    };
    let outcome: { success?: boolean; error?: string };
    for (;;) {
      client = startClient(settings, { progress });
      const wasKilled = new Promise<void>((resolve) => (killed = resolve));
      outcome = await Promise.race([client.done, wasKilled.then(() => ({ error: 'killed' }))]);
      await once(client.child, 'exit').catch(() => undefined);
      if (outcome.success || outcome.error !== 'killed') break;
      // What the server holds once the killed client's request has ended: where the next client resumes.
      stored.push(await settledOffset(gw, fileId));
    }
    expect(outcome).toMatchObject({ success: true });
    expect(next).toBe(CUTS.length);
    // Each kill found bytes stored, more each time: the next client resumed, it did not start again.
    expect(stored.length).toBe(3);
    expect(stored.every((offset, i) => offset > 0 && offset > (stored[i - 1] ?? 0))).toBe(true);
    // Every cut lost at most what was in flight: the clients sent the file and no more than that again.
    expect(proxy.upstreamBytes).toBeLessThan(SIZE + CUTS.length * IN_FLIGHT);

    const completed = await call(gw, 'put', `/file/${fileId}/complete`, alice).expect(200);
    expect(completed.body.status).toEqual({ status: 'Completed', size: SIZE });
    const blob = await gw.blobStore.read(objectKey(alice.address, fileId));
    const hash = createHash('sha256');
    for await (const chunk of blob!.stream) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(sha256);
    expect(await gw.db.fileUpload.count({ where: { fileId } })).toBe(0);
    process.stdout.write(
      `\n${store}: 256 MiB with ${CUTS.length} cuts, uploaded, completed and read back in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  });
});
