// The ports tests and `pnpm start` choose for servers they start later, or start again on: outside the
// kernel's ephemeral range, which it hands out to outgoing connections meanwhile.
import { existsSync, readFileSync } from 'node:fs';
import { freePort, isPortFree } from '../scripts/lib/ports';

const RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

it('chooses free ports below the ephemeral range, never the same one twice', async () => {
  const ports: number[] = [];
  for (let i = 0; i < 50; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) expect(await isPortFree(port)).toBe(true);
  if (existsSync(RANGE)) {
    const ephemeralStart = Number(readFileSync(RANGE, 'utf8').trim().split(/\s+/)[0]);
    for (const port of ports) expect(port).toBeLessThan(ephemeralStart);
  }
});
