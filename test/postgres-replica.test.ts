// The streaming replica that read-replica tests build on (issue 23): what the primary writes reaches the
// replica, and with replay paused it does not, although the replica has received it.
import { PostgresReplica, PrivatePostgres } from './support/private-services';

const available = PrivatePostgres.available();
if (!available) process.stdout.write('\nstreaming replica test skipped: PostgreSQL 15 server binaries or the postgres user are missing\n');

(available ? describe : describe.skip)('a streaming replica of a private PostgreSQL', () => {
  let primary: PrivatePostgres;
  let replica: PostgresReplica;
  const rows = async (server: PrivatePostgres) =>
    (await server.queryOne<{ notes: string[] }>('SELECT coalesce(array_agg(note ORDER BY id), ARRAY[]::text[]) AS notes FROM notes'))
      ?.notes;

  beforeAll(async () => {
    primary = await PrivatePostgres.start();
    await primary.queryOne('CREATE TABLE notes (id serial PRIMARY KEY, note text NOT NULL)');
    replica = await PostgresReplica.of(primary, 'test_replica');
  }, 60_000);
  afterAll(async () => {
    await replica?.destroy();
    await primary?.destroy();
  });

  it('serves what the primary wrote, and refuses writes', async () => {
    await primary.queryOne("INSERT INTO notes (note) VALUES ('first')");
    await replica.caughtUp();
    expect(await rows(replica)).toEqual(['first']);
    await expect(replica.queryOne("INSERT INTO notes (note) VALUES ('on the replica')")).rejects.toThrow(/read-only transaction/);
    expect(
      (await primary.queryOne<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', ['test_replica']))
        ?.active,
    ).toBe(true);
  });

  it('holds back a received write while replay is paused, and applies it on resume', async () => {
    await replica.pauseReplay();
    await primary.queryOne("INSERT INTO notes (note) VALUES ('second')");
    await replica.caughtUp('receive');
    expect(await rows(primary)).toEqual(['first', 'second']);
    expect(await rows(replica)).toEqual(['first']);

    await replica.resumeReplay();
    await replica.caughtUp();
    expect(await rows(replica)).toEqual(['first', 'second']);
  });
});
