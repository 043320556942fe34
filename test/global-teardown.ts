type Stoppable = { stop(): Promise<void> };
const started = globalThis as unknown as { __pdsTestServices?: Stoppable[] };

export default async function globalTeardown(): Promise<void> {
  for (const service of started.__pdsTestServices ?? []) await service.stop();
}
