// `pnpm admin …` (`node dist/admin.js …` in the image): the operator's CLI over the admin API. It talks
// HTTP to ADMIN_URL (default http://BIND_ADDRESS:ADMIN_PORT) with ADMIN_TOKEN, so it needs no database
// access and does exactly what the API does. Tables for people, `--json` for scripts.
import { Command, CommanderError } from 'commander';
import { loadConfig } from '@pds/config';

export interface CliIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** Standard input, read whole (a new operator's password, so it stays out of shell history and `ps`). */
  input?(): Promise<string>;
}

interface Usage {
  files: number;
  fileBytes: number;
  records: number;
  recordBytes: number;
}

interface UsageReport {
  checked: number;
  drift: { address: string; stored: Usage; counted: Usage }[];
}

interface Instance {
  address: string;
  state: string;
  stateReason?: string;
  stateChangedAt?: string;
  closeAfter?: string;
  createdAt: string;
  lastActiveAt?: string;
  ownerEmail?: string;
  usage: Usage;
  quota: { bytes: number; recordsBytes: number };
  customQuota: { bytes?: number; recordsBytes?: number };
  history?: { state: string; reason: string; actor: string; at: string }[];
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** 1536 → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1).replace(/\.0$/, '')} ${UNITS[unit]}`;
}

/** `2GiB`, `512 MiB`, `1048576`, or `default` (null: the cluster's quota). */
export function parseQuota(text: string): number | null {
  if (text.trim().toLowerCase() === 'default') return null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]i?b?|b)?\s*$/i.exec(text);
  if (!match) throw new Error(`${text} is not a size: give bytes, a size such as 2GiB or 512MiB, or "default"`);
  const power = match[2] ? 'bkmgtp'.indexOf(match[2][0]!.toLowerCase()) : 0;
  const bytes = Math.round(Number(match[1]) * 1024 ** power);
  if (bytes < 1 || !Number.isSafeInteger(bytes)) throw new Error(`${text} is not a size between 1 byte and 8 PiB`);
  return bytes;
}

const day = (iso: string | undefined) => (iso ? iso.slice(0, 10) : '-');

/** Columns padded to their widest cell: the first `words` to the left, the figures after them to the right. */
function table(rows: string[][], words: number, io: CliIo): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows)
    io.out(
      row
        .map((cell, i) => (i < words ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
}

function describe(instance: Instance, io: CliIo): void {
  const { usage, quota, customQuota } = instance;
  const own = (value: number | undefined) => (value === undefined ? ' (cluster default)' : '');
  const lines: [string, string][] = [
    ['address', instance.address],
    ['state', instance.state + (instance.stateReason ? ` (${instance.stateReason})` : '')],
    ...(instance.closeAfter ? ([['erased after', instance.closeAfter]] as [string, string][]) : []),
    ['created', instance.createdAt],
    ['last active', instance.lastActiveAt ?? 'never'],
    ['owner e-mail', instance.ownerEmail ?? '-'],
    ['files', `${usage.files}, ${formatBytes(usage.fileBytes)} of ${formatBytes(quota.bytes)}${own(customQuota.bytes)}`],
    [
      'records',
      `${usage.records}, ${formatBytes(usage.recordBytes)} of ${formatBytes(quota.recordsBytes)}${own(customQuota.recordsBytes)}`,
    ],
  ];
  for (const [name, value] of lines) io.out(`${`${name}:`.padEnd(14)}${value}`);
  for (const change of instance.history ?? []) io.out(`  ${change.at}  ${change.state} by ${change.actor}: ${change.reason}`);
}

/** Runs one command; resolves with the exit code. */
export async function adminCli(argv: string[], io: CliIo): Promise<number> {
  let json = false;
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const config = loadConfig(io.env);
    const base = config.ADMIN_URL ?? (config.ADMIN_PORT !== undefined ? `http://${config.BIND_ADDRESS}:${config.ADMIN_PORT}` : undefined);
    if (!base) throw new Error('set ADMIN_URL, or ADMIN_PORT (and BIND_ADDRESS) as the gateway has them');
    if (!config.ADMIN_TOKEN) throw new Error('set ADMIN_TOKEN to the gateway’s admin token');
    const res = await fetch(new URL(path, base), {
      method,
      headers: { Authorization: `Bearer ${config.ADMIN_TOKEN}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }).catch((error: unknown) => {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`cannot reach the admin API at ${base}: ${cause?.code ?? cause?.message ?? String(error)}`);
    });
    const text = await res.text();
    if (!res.ok) {
      const message = (() => {
        try {
          return (JSON.parse(text) as { message?: string }).message;
        } catch {
          return undefined;
        }
      })();
      throw new Error(`${res.status} ${message ?? res.statusText}`);
    }
    return (res.headers.get('content-type') ?? '').startsWith('application/json') ? (JSON.parse(text) as unknown) : text;
  };
  const show = (instance: unknown) => (json ? io.out(JSON.stringify(instance, null, 2)) : describe(instance as Instance, io));
  const one =
    (method: string, suffix: string, body?: (options: Record<string, string>) => unknown) =>
    async (address: string, options: Record<string, string>) =>
      show(await call(method, `/instances/${encodeURIComponent(address)}${suffix}`, body?.(options)));

  const program = new Command('admin')
    .description('Operate the instances of this cluster through the admin API (ADMIN_URL or ADMIN_PORT, ADMIN_TOKEN)')
    .option('--json', 'print the API’s JSON instead of a table')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text.trimEnd()), writeErr: (text) => io.err(text.trimEnd()) })
    .hook('preAction', (command) => {
      json = Boolean(command.opts().json);
    });
  const instances = program.command('instances').description('list, inspect, suspend, resume, close and set quotas of instances');
  instances
    .command('list')
    .description('instances, newest first, with state, dates, usage and quotas')
    .option('-q, --query <text>', "part of the address or of the owner's e-mail")
    .option('--state <state>', 'active, suspended or closing')
    .option('--skip <n>', 'instances to pass over', '0')
    .option('--take <n>', 'instances to show (at most 500)', '50')
    .action(async (options: { query?: string; state?: string; skip: string; take: string }) => {
      const query = new URLSearchParams({ skip: options.skip, take: options.take });
      if (options.query) query.set('q', options.query);
      if (options.state) query.set('state', options.state);
      const page = (await call('GET', `/instances?${query}`)) as { total: number; skip: number; instances: Instance[] };
      if (json) return io.out(JSON.stringify(page, null, 2));
      const rows = page.instances.map((i) => [
        i.address,
        i.state,
        day(i.createdAt),
        day(i.lastActiveAt),
        String(i.usage.files),
        `${formatBytes(i.usage.fileBytes)} / ${formatBytes(i.quota.bytes)}`,
        String(i.usage.records),
        `${formatBytes(i.usage.recordBytes)} / ${formatBytes(i.quota.recordsBytes)}`,
      ]);
      table(
        [['ADDRESS', 'STATE', 'CREATED', 'LAST ACTIVE', 'FILES', 'FILE BYTES / QUOTA', 'RECORDS', 'RECORD BYTES / QUOTA'], ...rows],
        4,
        io,
      );
      io.out(`${page.instances.length ? `${page.skip + 1}-${page.skip + page.instances.length}` : 'none'} of ${page.total}`);
    });
  instances.command('get').argument('<address>').description('one instance, with its state changes').action(one('GET', ''));
  instances
    .command('suspend')
    .argument('<address>')
    .requiredOption('--reason <text>', 'why (recorded, shown to the operator only)')
    .description('every call to the instance answers 423 until it is resumed; tokens and data are kept')
    .action(one('POST', '/suspend', ({ reason }) => ({ reason })));
  instances
    .command('resume')
    .argument('<address>')
    .requiredOption('--reason <text>', 'why (recorded)')
    .description('serve a suspended instance again')
    .action(one('POST', '/resume', ({ reason }) => ({ reason })));
  instances
    .command('quota')
    .argument('<address>')
    .option('--bytes <size>', 'file bytes (2GiB, 512MiB, a number, or "default")')
    .option('--records-bytes <size>', 'data record bytes (as --bytes)')
    .description("set the instance's quotas")
    .action(
      one('PUT', '/quota', (options) => ({
        ...(options.bytes !== undefined ? { bytes: parseQuota(options.bytes) } : {}),
        ...(options.recordsBytes !== undefined ? { recordsBytes: parseQuota(options.recordsBytes) } : {}),
      })),
    );
  program
    .command('usage')
    .description("the instances' usage")
    .command('verify')
    .description('recount every instance and report where the kept usage drifted (exit 1 when it did)')
    .action(async () => {
      const report = (await call('POST', '/usage/verify')) as UsageReport;
      if (json) io.out(JSON.stringify(report, null, 2));
      else if (report.drift.length === 0) io.out(`${report.checked} instances checked: no drift`);
      else {
        const figures = (u: Usage) => `${u.files} files, ${u.fileBytes} B; ${u.records} records, ${u.recordBytes} B`;
        table([['ADDRESS', 'KEPT', 'COUNTED'], ...report.drift.map((d) => [d.address, figures(d.stored), figures(d.counted)])], 3, io);
      }
      if (report.drift.length > 0) throw new Error(`${report.drift.length} of ${report.checked} instances drifted`);
    });
  instances
    .command('close')
    .argument('<address>')
    .requiredOption('--reason <text>', 'why (recorded)')
    .description('close the instance: 410 to everyone but its owner, who may cancel during the grace period; then it is erased')
    .action(one('POST', '/close', ({ reason }) => ({ reason })));

  const operators = program.command('operators').description('the accounts that log in to the operator console (ADMIN_TOKEN only)');
  operators
    .command('add')
    .argument('<name>', 'the log-in name: a-z, 0-9, ".", "_", "-"')
    .description('add an operator; the password is read from standard input (echo … | pnpm admin operators add olivia)')
    .action(async (name: string) => {
      const password = ((await io.input?.()) ?? '').split(/\r?\n/)[0] ?? '';
      if (!password) throw new Error('give the password on standard input');
      const added = (await call('POST', '/operators', { name, password })) as { name: string; createdAt: string };
      io.out(json ? JSON.stringify(added, null, 2) : `operator ${added.name} added: log in at the admin listener's address`);
    });
  operators
    .command('remove')
    .argument('<name>')
    .description('remove an operator; their console sessions end at once')
    .action(async (name: string) => {
      const answer = (await call('DELETE', `/operators/${encodeURIComponent(name)}`)) as { message: string };
      io.out(json ? JSON.stringify(answer, null, 2) : answer.message);
    });
  operators
    .command('list')
    .description('the operator accounts')
    .action(async () => {
      const { operators: list } = (await call('GET', '/operators')) as { operators: { name: string; createdAt: string }[] };
      if (json) return io.out(JSON.stringify(list, null, 2));
      table([['NAME', 'CREATED'], ...list.map((o) => [o.name, day(o.createdAt)])], 2, io);
    });
  program
    .command('audit')
    .description('what operators did, newest first')
    .command('export')
    .description('the whole audit as JSON lines (one entry a line) on standard output')
    .option('--actor <actor>', 'only this actor (operator:<name>, admin-token)')
    .option('--action <action>', 'only this action, or a prefix ending in "." (instance.)')
    .option('--target <text>', 'only targets containing this (an address)')
    .action(async (options: { actor?: string; action?: string; target?: string }) => {
      const query = new URLSearchParams(Object.entries(options).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const lines = (await call('GET', `/audit/export?${query}`)) as string;
      if (lines) io.out(lines.trimEnd());
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    io.err(`admin: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
