// Preloaded by `pnpm bench` into the product's process (with --expose-gc), nothing else: SIGUSR2 runs
// the full, memory-reducing collection V8's memory reducer runs on its own once a process goes quiet,
// so the memory figure reads RSS without the garbage, and the emptied heap pages, V8 happens to hold
// at that moment (it collects lazily: how much it held after a burst swung the figure by ±3 KiB per
// instance from run to run). What the process then holds goes to its log.
type Collect = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
const collect = (globalThis as { gc?: Collect }).gc;
if (collect)
  process.on('SIGUSR2', () => {
    collect();
    collect();
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    console.error(
      `[gc-on-signal] MiB: rss ${mib(rss)}, heap ${mib(heapUsed)} of ${mib(heapTotal)}, external ${mib(external)} (array buffers ${mib(arrayBuffers)})`,
    );
  });
