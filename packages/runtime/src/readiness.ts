// What a process depends on, checked: at start-up (requireReady refuses to start) and by /readyz.
/** One dependency's check: resolves when it answers, throws (with a message naming why) when not. */
export type ReadinessCheck = () => Promise<void>;

const CHECK_TIMEOUT_MS = 2000;

/** Each check's outcome: 'ok', or why it failed. */
export async function runChecks(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const entries = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await outcome(check)] as const));
  return Object.fromEntries(entries);
}

/** `postgres (database "x" does not exist); redis (…)`, or undefined when every check passed. */
export function describeFailures(results: Record<string, string>): string | undefined {
  const down = Object.entries(results).filter(([, result]) => result !== 'ok');
  return down.length === 0 ? undefined : down.map(([name, why]) => `${name} (${why})`).join('; ');
}

async function outcome(check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    // First line only, bounded: driver messages name the cause ("database \"x\" does not exist"), never credentials.
    const message = error instanceof Error ? error.message : String(error);
    return (message.split('\n')[0] ?? '').slice(0, 200) || 'failed';
  } finally {
    clearTimeout(timer);
  }
}

/** Throws `<what> cannot start: postgres (…)` unless every check passes (start-up refuses what /readyz would). */
export async function requireReady(what: string, checks: Record<string, ReadinessCheck>): Promise<void> {
  const problem = describeFailures(await runChecks(checks));
  if (problem) throw new Error(`${what} cannot start: ${problem}`);
}
