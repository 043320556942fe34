// data/access.ts below HTTP, on real PostgreSQL: each rule as one line of a table. The callers are
// real accounts of one instance (its owner, a plain user, an app); a row gives the account exactly the
// grant it names, in the DataGrant table, then asks the policy. The HTTP matrix is data-access.test.ts.
import { DataGrantRepository, type DataAccess } from '@pds/db';
import { useGateway } from '../../../test/support/use-gateway';
import type { Caller } from '../src/context';
import { DataAccessPolicy } from '../src/data/access';
import type { ResolvedInstance } from '../src/instances/registry';
import { appRecord, installApp } from './apps-fixtures';
import { callerWith, tenantAt } from './callers';

type CallerKind = 'owner' | 'user' | 'app' | 'anonymous';

const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice'], users: { carol: 'alice' } });
const { alice } = owners;
const grants = () => new DataGrantRepository(gw.db);
const policy = () => new DataAccessPolicy(grants());
let tenant: ResolvedInstance;
const callers = {} as Record<CallerKind, Caller | undefined>;

beforeAll(async () => {
  tenant = await tenantAt(gw, alice.address);
  const app = await installApp(gw, dex, alice, appRecord('notes'));
  callers.owner = await callerWith(gw, tenant, alice);
  callers.user = await callerWith(gw, tenant, users.carol);
  callers.app = await callerWith(gw, tenant, app);
  callers.anonymous = undefined;
});

/** "read social/*" → that grant; "none" → no grant. */
function grantOf(text: string, userId: string) {
  if (text === 'none') return undefined;
  const [access, table] = text.split(' ') as [DataAccess, string];
  const [namespace, endpoint] = table.split(/\/(.*)/) as [string, string];
  return { userId, namespace, endpoint, access };
}

/** Leaves the account with exactly this grant. */
async function onlyGrant(caller: Caller | undefined, text: string): Promise<void> {
  if (!caller) return;
  const instanceId = tenant.instance.id;
  for (const { userId, namespace, endpoint, access } of await grants().grants(instanceId, caller.user.id)) {
    await grants().revoke(instanceId, { userId, namespace, endpoint, access });
  }
  const grant = grantOf(text, caller.user.id);
  if (grant) await grants().grant(instanceId, grant);
}

/** What the policy decided: allowed, or the status it refused with. */
async function outcomeOf(decision: Promise<unknown>): Promise<'allowed' | number> {
  try {
    await decision;
    return 'allowed';
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === undefined) throw error;
    return status;
  }
}

const tableOf = (path: string) => {
  const [namespace, endpoint] = path.split(/\/(.*)/) as [string, string];
  return { namespace, endpoint };
};

describe('who may read and write a data table', () => {
  it.each`
    caller         | grant                       | operation  | table                  | outcome
    ${'owner'}     | ${'none'}                   | ${'read'}  | ${'anything/at-all'}   | ${'allowed'}
    ${'owner'}     | ${'none'}                   | ${'write'} | ${'anything/at-all'}   | ${'allowed'}
    ${'anonymous'} | ${'none'}                   | ${'read'}  | ${'social/feed'}       | ${401}
    ${'anonymous'} | ${'none'}                   | ${'write'} | ${'social/feed'}       | ${401}
    ${'user'}      | ${'none'}                   | ${'read'}  | ${'social/feed'}       | ${403}
    ${'user'}      | ${'none'}                   | ${'write'} | ${'social/feed'}       | ${403}
    ${'user'}      | ${'read social/*'}          | ${'read'}  | ${'social/feed'}       | ${'allowed'}
    ${'user'}      | ${'read social/*'}          | ${'read'}  | ${'social/feed/likes'} | ${'allowed'}
    ${'user'}      | ${'read social/*'}          | ${'write'} | ${'social/feed'}       | ${403}
    ${'user'}      | ${'read social/*'}          | ${'read'}  | ${'notes/items'}       | ${403}
    ${'user'}      | ${'write social/*'}         | ${'write'} | ${'social/feed'}       | ${'allowed'}
    ${'user'}      | ${'write social/*'}         | ${'read'}  | ${'social/feed'}       | ${403}
    ${'user'}      | ${'read social/feed'}       | ${'read'}  | ${'social/feed'}       | ${'allowed'}
    ${'user'}      | ${'read social/feed'}       | ${'read'}  | ${'social/feed/likes'} | ${'allowed'}
    ${'user'}      | ${'read social/feed'}       | ${'read'}  | ${'social/feedback'}   | ${403}
    ${'user'}      | ${'read social/feed'}       | ${'read'}  | ${'social/posts'}      | ${403}
    ${'user'}      | ${'read social/feed/likes'} | ${'read'}  | ${'social/feed'}       | ${403}
    ${'user'}      | ${'write social/feed'}      | ${'write'} | ${'social/feed/likes'} | ${'allowed'}
    ${'user'}      | ${'write social/feed'}      | ${'read'}  | ${'social/feed'}       | ${403}
    ${'app'}       | ${'none'}                   | ${'read'}  | ${'notes/items'}       | ${403}
    ${'app'}       | ${'write notes/*'}          | ${'write'} | ${'notes/items'}       | ${'allowed'}
    ${'app'}       | ${'write notes/*'}          | ${'read'}  | ${'notes/items'}       | ${403}
    ${'app'}       | ${'read calendar/*'}        | ${'read'}  | ${'calendar/events'}   | ${'allowed'}
    ${'app'}       | ${'read calendar/*'}        | ${'write'} | ${'calendar/events'}   | ${403}
    ${'app'}       | ${'read fitness/steps'}     | ${'read'}  | ${'fitness/sleep'}     | ${403}
  `('$caller with grant $grant may $operation $table: $outcome', async ({ caller, grant, operation, table, outcome }) => {
    const who = callers[caller as CallerKind];
    await onlyGrant(who, grant);
    expect(await outcomeOf(policy().require(tenant.instance.id, who, operation, tableOf(table)))).toBe(outcome);
  });

  it('refuses a batch whole when one of its tables is not covered, naming that table', async () => {
    await onlyGrant(callers.user, 'write social/*');
    const decision = policy().requireAll(tenant.instance.id, callers.user, 'write', [tableOf('social/feed'), tableOf('notes/items')]);
    await expect(decision).rejects.toMatchObject({ status: 403, message: 'No write access to data notes/items' });
  });
});

describe('records by id, and the calls of one account', () => {
  /** The account that wrote a record or holds a debit; "no account" when it was removed (userId null). */
  const accountId = (who: string) => (who === 'no account' ? null : (callers[who as CallerKind] as Caller).user.id);

  it.each`
    caller     | writer          | reaches
    ${'owner'} | ${'owner'}      | ${true}
    ${'owner'} | ${'user'}       | ${true}
    ${'user'}  | ${'user'}       | ${true}
    ${'user'}  | ${'owner'}      | ${false}
    ${'user'}  | ${'no account'} | ${false}
    ${'app'}   | ${'user'}       | ${false}
  `('$caller reaches by id a record written by $writer: $reaches', ({ caller, writer, reaches }) => {
    expect(policy().reachesById(callers[caller as CallerKind] as Caller, { userId: accountId(writer) })).toBe(reaches);
  });

  it.each`
    caller         | outcome
    ${'owner'}     | ${'allowed'}
    ${'user'}      | ${403}
    ${'app'}       | ${403}
    ${'anonymous'} | ${401}
  `('requireOwner (the list of tables, bundles, managing debits): $caller: $outcome', async ({ caller, outcome }) => {
    expect(await outcomeOf(Promise.resolve().then(() => policy().requireOwner(callers[caller as CallerKind])))).toBe(outcome);
  });

  it.each`
    caller         | holder          | outcome
    ${'owner'}     | ${'user'}       | ${'allowed'}
    ${'user'}      | ${'user'}       | ${'allowed'}
    ${'app'}       | ${'user'}       | ${403}
    ${'user'}      | ${'no account'} | ${403}
    ${'anonymous'} | ${'user'}       | ${401}
  `('requireDebitReader: $caller reading the values of a debit held by $holder: $outcome', async ({ caller, holder, outcome }) => {
    const decision = Promise.resolve().then(() => policy().requireDebitReader(callers[caller as CallerKind], accountId(holder)));
    expect(await outcomeOf(decision)).toBe(outcome);
  });
});
