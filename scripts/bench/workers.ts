// GATEWAY_WORKERS=2 against 1: the file GET on a gateway run alone, each started for this part.
import { freePort } from '../lib/ports';
import { expectStatus } from './client';
import type { LoadResult } from './load';
import type { Measurer } from './measure';
import { CONNECTIONS } from './options';
import { startProcess } from './processes';
import type { WorkersFigure } from './report';
import { FILE_GET, routeSpecs } from './routes';
import type { Stack } from './stack';

export async function measureWorkers(stack: Stack, measurer: Measurer): Promise<WorkersFigure> {
  const fileGet = routeSpecs(stack).find((route) => route.name === FILE_GET)?.product;
  if (!fileGet) throw new Error(`no route ${FILE_GET}`);
  const gateway = async (workers: number) => {
    const port = await freePort();
    const env = { ...stack.gatewayEnv, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', PORT: String(port), GATEWAY_WORKERS: String(workers) };
    return { port, running: await startProcess(`gateway-${workers}-workers`, 'apps/gateway/src/main.ts', port, env, stack.workDir) };
  };
  const w1 = await gateway(1);
  const w2 = await gateway(2);
  try {
    await new Promise((r) => setTimeout(r, 2000)); // both workers of the second gateway listening
    for (const w of [w1, w2]) await expectStatus(w.port, fileGet, 200, `file GET, ${w.running.name}`);
    // The workers are child processes: their CPU is not the parent's, so this part compares req/s alone.
    const side = (w: typeof w1) => ({ label: w.running.name, port: w.port, pid: w.running.process.pid as number, requests: [fileGet] });
    const [one, two] = (await measurer.interleaved([side(w1), side(w2)], CONNECTIONS)) as [LoadResult, LoadResult];
    return { route: FILE_GET, one, two, scaling: two.rps / one.rps };
  } finally {
    await w1.running.stop();
    await w2.running.stop();
  }
}
