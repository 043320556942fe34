// Preloaded by `pnpm bench` into the product's process (with --expose-gc), nothing else: SIGUSR2 runs
// full garbage collections, so the memory figure reads RSS without the garbage V8 happens to hold at
// that moment (it collects lazily, and how much it holds after a burst swung the figure by ±3 KiB
// per instance from run to run).
const collect = (globalThis as { gc?: () => void }).gc;
if (collect)
  process.on('SIGUSR2', () => {
    collect();
    collect();
  });
