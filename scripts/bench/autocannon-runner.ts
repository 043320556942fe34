// The fallback load generator (when wrk is missing), run as its own process by load.ts:
// `autocannon-runner.ts <options.json>` prints one `RESULT {…}` line like the wrk script does.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadOptions } from './load';

async function main(): Promise<void> {
  const options = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as LoadOptions;
  const result = await autocannon({
    url: `http://127.0.0.1:${options.port}`,
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
    requests: options.requests as autocannon.Request[],
  });
  const seconds = result.duration;
  const requests = result.requests.total;
  // autocannon reports p97.5 rather than p95; it stands in for it.
  const out = {
    requests,
    seconds,
    rps: requests / seconds,
    p50: result.latency.p50,
    p95: result.latency.p97_5,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx - (result['3xx'] ?? 0),
  };
  console.log(`RESULT ${JSON.stringify(out)}`);
}

void main();
