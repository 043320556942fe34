// Operator CLI for dex (`pnpm dex <command>`): trust roots and instance keys, straight in dex's
// database (DEX_DATABASE_URL). Run `pnpm dex --help` for the commands.
import { Command } from 'commander';
import { loadConfig, loadConfigFor } from '@pds/config';
import {
  AdminRepository,
  CertifiedClusterRepository,
  ConsoleSessionRepository,
  createDexDb,
  RegisteredInstanceRepository,
  type DexDb,
} from '@pds/db';
import { hashPassword, keyFingerprint, passwordProblem } from '@pds/tokens';
import { isDomainName, parseInstanceAddress } from './address';

function withDb(work: (db: DexDb) => Promise<void>): () => Promise<void> {
  return async () => {
    const db = createDexDb(loadConfigFor('dex-migrate').DEX_DATABASE_URL, { max: 1 });
    try {
      await work(db);
    } finally {
      await db.$disconnect();
    }
  };
}

/** The address the way dex stores it, or an error naming the rule it breaks. */
function address(raw: string): string {
  try {
    return parseInstanceAddress(raw, 'address').address;
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

const program = new Command('dex').description('Operate the dex exchange service');

program
  .command('certify')
  .argument('<domain>', 'cluster domain whose instances may register')
  .description('certify a cluster domain')
  .action((domain: string) =>
    withDb(async (db) => {
      const name = domain.trim().toLowerCase();
      if (!isDomainName(name)) throw new Error(`${domain} is not a domain name`);
      await new CertifiedClusterRepository(db).ensure([name]);
      console.log(`certified ${name}`);
    })(),
  );

program
  .command('clusters')
  .description('list certified cluster domains')
  .action(withDb(async (db) => console.log((await new CertifiedClusterRepository(db).list()).join('\n'))));

const admin = program.command('admin').description('dex administrators (owners of the listed instances)');
admin
  .command('add')
  .argument('<address>', 'instance address whose owner becomes an administrator')
  .action((raw: string) =>
    withDb(async (db) => {
      await new AdminRepository(db).ensure([address(raw)]);
      console.log(`admin ${address(raw)} added`);
    })(),
  );
admin
  .command('remove')
  .argument('<address>')
  .action((raw: string) =>
    withDb(async (db) => {
      const removed = await new AdminRepository(db).remove(address(raw));
      // Its console sessions end with it.
      if (removed) await new ConsoleSessionRepository(db).removeActor(address(raw));
      console.log(removed ? `admin ${address(raw)} removed` : `${address(raw)} was not an admin`);
      // DEX_ADMINS seeds admins again at each dex start: say so instead of surprising the operator.
      if (removed && loadConfig().DEX_ADMINS.includes(address(raw)))
        console.log('note: DEX_ADMINS lists it, so the next dex start adds it back');
    })(),
  );
admin
  .command('password')
  .argument('<address>', 'an administrator')
  .description('set the console password of an administrator, read from standard input (echo … | pnpm dex admin password <address>)')
  .action((raw: string) =>
    withDb(async (db) => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      const password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
      if (!password) throw new Error('give the password on standard input');
      const problem = passwordProblem(password, [address(raw), address(raw).split('.')[0]!]);
      if (problem) throw new Error(`password: ${problem}`);
      if (!(await new AdminRepository(db).setPassword(address(raw), await hashPassword(password))))
        throw new Error(`${address(raw)} is not an admin (pnpm dex admin add ${address(raw)} first)`);
      // A new password ends the sessions opened with the old one.
      await new ConsoleSessionRepository(db).removeActor(address(raw));
      console.log(`console password of ${address(raw)} set`);
    })(),
  );
admin.command('list').action(withDb(async (db) => console.log((await new AdminRepository(db).list()).join('\n'))));

program
  .command('instances')
  .description('list registered instances with state and key fingerprint')
  .action(
    withDb(async (db) => {
      const repository = new RegisteredInstanceRepository(db);
      const take = 1000;
      for (let after: string | undefined; ;) {
        const { instances } = await repository.page({ after, take });
        for (const i of instances) {
          const state = i.state === 'key_mismatch' ? 'key-mismatch' : i.state;
          console.log(`${i.address}\t${state}\t${i.fingerprint ?? '-'}\t${i.updatedAt.toISOString()}`);
        }
        if (instances.length < take) break;
        after = instances.at(-1)?.address;
      }
    }),
  );

program
  .command('recertify')
  .argument('<address>', 'an instance in state key-mismatch')
  .description('trust the new key of an instance whose key changed')
  .action((raw: string) =>
    withDb(async (db) => {
      const ok = await new RegisteredInstanceRepository(db).recertify(address(raw), keyFingerprint);
      if (!ok) throw new Error(`${address(raw)} is not waiting for re-certification`);
      console.log(`${address(raw)} re-certified with its new key`);
    })(),
  );

program.parseAsync().catch((error: unknown) => {
  console.error(`dex: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
