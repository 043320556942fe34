// One call for a test file's gateway and accounts, in place of the preamble each file used to copy:
//
//   const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice'], users: { bob: 'alice' } });
//   const { alice } = owners;
//
// It registers the beforeAll that starts the gateway (test/support/gateway.ts) and signs up the owners,
// then adds the users, and the afterAll that closes the gateway. The objects it returns are empty until
// that beforeAll has run and are then filled in place, so a file destructures them once, at the top or
// in a describe, and reads them in its tests and in its own beforeAll (declared after this call, hooks run
// in the order they are declared).
import type { Env } from '@pds/config';
import type { SigningKeys } from '@pds/tokens';
import { startGatewayWithDex } from '../../apps/gateway/test/apps-fixtures';
import { storeEnv, type StoreKind } from '../../apps/gateway/test/files-support';
import { addUser, signUp, startTestGateway, type SignedUp, type TestGateway } from './gateway';

export type AddedUser = Awaited<ReturnType<typeof addUser>>;

export interface GatewayOptions<O extends string, U extends string> {
  /** Settings to override; test/support/gateway.ts sets the rest. */
  env?: Partial<Record<keyof Env, string>>;
  /** The blob store: the local disk (the default) or the S3 server that test/global-setup.ts provides. */
  store?: StoreKind;
  /** Trust as dex's key a key pair made for the test (`dex` of the handle), to sign app pushes with. */
  dex?: boolean;
  /** Instances to sign up, by their owner's name, one after the other. */
  owners?: readonly O[];
  /** Plain users to add, by name, each to the instance of the owner named (after every sign-up). */
  users?: Record<U, NoInfer<O>>;
}

export interface GatewayHandle<O extends string, U extends string> {
  gw: TestGateway;
  /** Dex's key pair; filled only with `dex: true`. */
  dex: SigningKeys;
  owners: Record<O, SignedUp>;
  users: Record<U, AddedUser>;
}

export function useGateway<const O extends string = never, U extends string = never>(
  options: GatewayOptions<O, U> = {},
): GatewayHandle<O, U> {
  const owners = options.owners ?? [];
  const users = Object.entries(options.users ?? {}) as [U, O][];
  const handle: GatewayHandle<O, U> = {
    gw: {} as TestGateway,
    dex: {} as SigningKeys,
    owners: Object.fromEntries(owners.map((name) => [name, {}])) as Record<O, SignedUp>,
    users: Object.fromEntries(users.map(([name]) => [name, {}])) as Record<U, AddedUser>,
  };
  let started = false;

  beforeAll(async () => {
    const env = { ...(options.store && storeEnv(options.store)), ...options.env };
    if (options.dex) {
      const { gw, dex } = await startGatewayWithDex(env);
      Object.assign(handle.gw, gw);
      Object.assign(handle.dex, dex);
    } else {
      Object.assign(handle.gw, await startTestGateway(env));
    }
    started = true;
    for (const name of owners) Object.assign(handle.owners[name], await signUp(handle.gw.app, name));
    for (const [name, owner] of users) Object.assign(handle.users[name], await addUser(handle.gw.app, handle.owners[owner], name));
  });
  // A gateway that failed to start has nothing to close, and saying so would hide why it failed.
  afterAll(async () => {
    if (started) await handle.gw.close();
  });
  return handle;
}
