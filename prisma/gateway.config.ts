import { defineConfig } from 'prisma/config';
import { cliAdapter } from './cli-adapter';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: 'gateway',
  migrations: { path: 'gateway/migrations' },
  adapter: async () => cliAdapter('DATABASE_URL'),
});
