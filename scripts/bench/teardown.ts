// What the bench started, stopped in reverse order exactly once: at the end of a run, on a failure,
// or on Ctrl-C (which still stops the processes and drops the bench's databases).
export class Teardown {
  private readonly steps: (() => Promise<void>)[] = [];
  private done: Promise<void> | undefined;

  constructor(private readonly log: (message: string) => void) {
    // A reader that goes away (`pnpm bench | head`) must not kill the bench before it cleans up: EPIPE is ignored.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void this.run().then(() => process.exit(130)));
  }

  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  run(): Promise<void> {
    return (this.done ??= (async () => {
      for (const step of this.steps.reverse()) await step().catch((e: unknown) => this.log(`clean-up: ${String(e)}`));
    })());
  }
}
