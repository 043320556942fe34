import { defineConfig } from 'prisma/config';
import { cliAdapter } from './cli-adapter';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: 'dex',
  migrations: { path: 'dex/migrations' },
  adapter: async () => cliAdapter('DEX_DATABASE_URL'),
});
