// What a `pnpm bench` run measures and for how long: `--quick` (shorter rounds, smaller streams) and
// `--only <words>` (the parts whose names contain one of the comma-separated words, e.g. `--only file,spread`).

export interface Settings {
  /** Seconds of one measured run, rounds of interleaved runs, seconds of warm-up per side. */
  seconds: number;
  rounds: number;
  /**
   * Rounds of the write figures: a write's cost moves more from run to run than a read's (the table and
   * its indexes grow, WAL segments and checkpoints come when they come); the same bare insert measured
   * 824-1,059 µs in one run's figures, so three rounds left a write figure's median at the mercy of one.
   */
  writeRounds: number;
  warmSeconds: number;
  streamMiB: number[];
  streamRounds: number;
  mixedSeconds: number;
  files: number;
  spread: number;
}

export interface BenchOptions {
  quick: boolean;
  settings: Settings;
  /** Whether a part (a route figure's name, or spread, mixed, workers, streams) is to run. */
  wanted(name: string): boolean;
  /** `--only scale`: the provider-sized database alone (scripts/bench/scale.ts), without the usual stack. */
  scaleOnly: boolean;
}

export const CONNECTIONS = 32;
/** Search is measured for its latency, so with few connections (no queueing behind 1,000-row pages). */
export const SEARCH_CONNECTIONS = 4;
export const MIXED_CONNECTIONS = 48;

export function benchOptions(argv: string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex >= 0 ? (argv[onlyIndex + 1] ?? '').toLowerCase().split(',').filter(Boolean) : [];
  return {
    quick,
    settings: quick
      ? {
          seconds: 2,
          rounds: 3,
          writeRounds: 5,
          warmSeconds: 1,
          streamMiB: [1, 64],
          streamRounds: 2,
          mixedSeconds: 5,
          files: 100_000,
          spread: 10_000,
        }
      : {
          seconds: 5,
          rounds: 3,
          writeRounds: 5,
          warmSeconds: 2,
          streamMiB: [1, 64, 512],
          streamRounds: 3,
          mixedSeconds: 10,
          files: 100_000,
          spread: 10_000,
        },
    wanted: (name) => only.length === 0 || only.some((word) => name.toLowerCase().includes(word)),
    scaleOnly: only.length > 0 && only.every((word) => word === 'scale'),
  };
}
