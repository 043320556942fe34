// Master-key rotation: every sealed private key re-sealed under a new key (docs/deploy.md). Run with
// the cluster stopped. Pages through the rows in short transactions; each page is re-sealed whole or
// not at all, and a row already under the new key is left alone, so a stopped run can simply be run again.
import type { DexDb, GatewayDb } from './clients';

/** The re-sealed value, or null when the row needs no change. */
export type Reseal = (sealed: string) => string | null;

const PAGE = 500;

/** Instance private keys in the gateway database; returns how many rows changed. */
export async function resealInstanceKeys(db: GatewayDb, reseal: Reseal): Promise<number> {
  let changed = 0;
  let after: string | undefined;
  for (;;) {
    const page = await db.instance.findMany({
      where: after ? { id: { gt: after } } : {},
      orderBy: { id: 'asc' },
      take: PAGE,
      select: { id: true, privateKeyEnc: true },
    });
    if (page.length === 0) return changed;
    const updates = page.flatMap(({ id, privateKeyEnc }) => {
      const next = reseal(privateKeyEnc);
      return next === null ? [] : [db.instance.update({ where: { id }, data: { privateKeyEnc: next } })];
    });
    await db.$transaction(updates);
    changed += updates.length;
    after = page[page.length - 1]!.id;
  }
}

/** Dex's own signing key in dex's database; returns how many rows changed (0 or 1). */
export async function resealDexKey(db: DexDb, reseal: Reseal): Promise<number> {
  const rows = await db.dexKey.findMany({ select: { id: true, privateKeyEnc: true } });
  const updates = rows.flatMap(({ id, privateKeyEnc }) => {
    const next = reseal(privateKeyEnc);
    return next === null ? [] : [db.dexKey.update({ where: { id }, data: { privateKeyEnc: next } })];
  });
  await db.$transaction(updates);
  return updates.length;
}
