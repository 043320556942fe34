// File GETs spread over many active instances (10,000; the scale part: 100,000) against the same GET on
// one instance (a gateway directly), and what those instances add to its memory.
import { warmEach } from './client';
import type { BenchRequest, LoadResult } from './load';
import type { Measurer, Side } from './measure';
import { CONNECTIONS } from './options';
import { collectedResidentBytes } from './processes';
import type { MemoryFigure, SpreadFigure } from './report';

/** A gateway process: where requests go, whose memory is read. */
export interface Measured {
  port: number;
  pid: number;
}

export async function measureSpread(
  { port, pid }: Measured,
  instances: { address: string; token: string; fileId: string }[],
  measurer: Measurer,
  log: (message: string) => void,
  memoryTargetBytes = 5 * 1024,
): Promise<{ spread: SpreadFigure; memory: MemoryFigure }> {
  const many: BenchRequest[] = instances.map((s) => ({
    method: 'GET',
    path: `/api/v2.6/files/file/${s.fileId}`,
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
  // The figure is about *active* instances: at these rates each one is hit only about once per
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
      targetBytes: memoryTargetBytes,
      met: perInstance <= memoryTargetBytes,
    },
  };
}
