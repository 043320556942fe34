// The purge deletes a closed instance's rows table by table (InstanceErasureRepository): a row that
// references another goes first, so a foreign key without ON DELETE CASCADE, added some day, never
// stops it. The order comes from the catalog; here, from tables given by hand.
import { referencingFirst } from '../src/erasure';

const before = (order: string[], a: string, b: string) => order.indexOf(a) < order.indexOf(b);

describe('referencingFirst', () => {
  it('places every table before the tables it references, each once', () => {
    const order = referencingFirst([
      { name: 'User', references: ['Instance'] },
      { name: 'File', references: ['Instance'] },
      { name: 'FilePermission', references: ['File', 'User'] },
      { name: 'DataGrant', references: ['User'] },
      { name: 'Orphan', references: [] },
    ]);
    expect([...order].sort()).toEqual(['DataGrant', 'File', 'FilePermission', 'Orphan', 'User']);
    expect(before(order, 'FilePermission', 'File')).toBe(true);
    expect(before(order, 'FilePermission', 'User')).toBe(true);
    expect(before(order, 'DataGrant', 'User')).toBe(true);
  });

  it('ends on a cycle of references instead of looping', () => {
    const order = referencingFirst([
      { name: 'A', references: ['B'] },
      { name: 'B', references: ['A'] },
    ]);
    expect([...order].sort()).toEqual(['A', 'B']);
  });
});
