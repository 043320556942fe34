// File GETs spread over 10,000 active instances against the same GET on one instance (the product
// directly), and what those instances add to the product's memory.
import { warmEach } from './client';
import type { BenchRequest, LoadResult } from './load';
import type { Measurer, Side } from './measure';
import { CONNECTIONS } from './options';
import { collectedResidentBytes } from './processes';
import type { MemoryFigure, SpreadFigure } from './report';
import type { Stack } from './stack';

export async function measureSpread(
  stack: Stack,
  measurer: Measurer,
  log: (message: string) => void,
): Promise<{ spread: SpreadFigure; memory: MemoryFigure }> {
  const { direct: port, pid } = stack.product;
  const many: BenchRequest[] = stack.spread.map((s) => ({
    method: 'GET',
    path: '/api/v2.6/files/file/one.txt',
    headers: { Host: s.address, 'X-Auth-Token': s.token },
  }));
  const one = many.slice(0, 1);
  await measurer.load(port, one, CONNECTIONS, measurer.settings.warmSeconds);
  // The memory figure is what the instances add, not what serving requests grows the heap by: the
  // same number of requests, sent the same way, first to the one instance, then one to each.
  await warmEach(
    port,
    many.map(() => one[0] as BenchRequest),
  );
  const rssBefore = await collectedResidentBytes(pid);
  // The figure is about 10,000 *active* instances: at these rates each one is hit only about once per
  // round, so without this the rounds would measure first requests (key parsing, token verification,
  // account read) rather than the steady state.
  log(`warming each of the ${many.length} instances once`);
  await warmEach(port, many);
  const rssAfter = await collectedResidentBytes(pid);
  const side = (label: string, requests: BenchRequest[]): Side => ({ label, port, pid, requests });
  const [oneInstance, manyInstances] = (await measurer.interleaved(
    [side('file GET on one instance', one), side(`file GET over ${many.length} instances`, many)],
    CONNECTIONS,
  )) as [LoadResult, LoadResult];
  const ratio = manyInstances.rps / oneInstance.rps;
  const perInstance = Math.max(0, rssAfter - rssBefore) / many.length;
  return {
    spread: {
      instances: many.length,
      one: oneInstance,
      many: manyInstances,
      ratio,
      cpuRatio: (oneInstance.cpuUsPerRequest ?? 0) / (manyInstances.cpuUsPerRequest ?? 1),
      target: 0.9,
      met: ratio >= 0.9,
    },
    memory: {
      rssBeforeBytes: rssBefore,
      rssAfterBytes: rssAfter,
      bytesPerActiveInstance: perInstance,
      targetBytes: 5 * 1024,
      met: perInstance <= 5 * 1024,
    },
  };
}
