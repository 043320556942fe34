import { PrivateRedisCluster } from '../../test/support/private-services';
import { requestRedis, blockingRedis, thumbnailProducer, runQueue, QUEUE_NAMES } from '@pds/queue';
(async () => {
  const c = await PrivateRedisCluster.start();
  const target = { clusterNodes: c.addresses };
  const req = requestRedis(target);
  const blk = blockingRedis(target);
  const p = thumbnailProducer({ connection: req, prefix: 'smoke' });
  const runs = new Set<string>();
  const w = runQueue(QUEUE_NAMES.thumbnail, async (job) => { runs.add(job.id!); }, { connection: blk, prefix: 'smoke' }, { warn: () => undefined, error: (f: any) => console.log(Date.now() - t0, 'worker error', f.error) });
  await w.waitUntilReady();
  await new Promise((r) => req.status === 'ready' ? r(0) : req.once('ready', r));
  let t0 = Date.now();
  let acked = 0, failed = 0; let lastErr = '';
  let loading = true;
  const load = (async () => { for (let n = 0; loading; n++) { try { await p.enqueue({ instanceId: 'i', address: 'a', fileId: String(n) }, `j${n}`); acked++; } catch (e) { failed++; lastErr = (e as Error).message; } await new Promise((r) => setTimeout(r, 20)); } })();
  await new Promise((r) => setTimeout(r, 1000));
  const m = c.masterOf('{smoke}');
  t0 = Date.now();
  await c.kill(m);
  console.log('killed', m);
  for (let i = 0; i < 15; i++) { await new Promise((r) => setTimeout(r, 1000)); console.log(Date.now() - t0, 'acked', acked, 'failed', failed, lastErr, 'runs', runs.size, 'req', req.status, 'blk', blk.status); }
  loading = false; await load;
  await w.close(); await p.close(); req.disconnect(); blk.disconnect(); await c.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
