// `pnpm admin …` / `node dist/admin.js …`: the operator's CLI over the admin API (admin/cli.ts).
import { adminCli } from './admin/cli';

void adminCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  input: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
}).then((code) => {
  process.exitCode = code;
});
