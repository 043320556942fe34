// Usage: tsx scripts/prisma.ts <gateway|dex> <prisma args...>   e.g. `gateway migrate dev --name add_x`
import { runPrisma, type Target } from './lib/prisma';

const [target, ...args] = process.argv.slice(2);
if ((target !== 'gateway' && target !== 'dex') || args.length === 0) {
  console.error('usage: tsx scripts/prisma.ts <gateway|dex> <prisma args...>');
  process.exit(2);
}
process.exit(runPrisma(target as Target, args));
