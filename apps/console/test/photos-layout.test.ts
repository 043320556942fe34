// The photo timeline's layout, before any picture loads: days under month headings, each day's rows
// exactly as wide as the column at each picture's own proportions, and what a window of it draws.
import { blocksBetween, layoutTimeline, type Block, type Sized } from '../src/photos/layout';

const OPTIONS = { width: 1000, rowHeight: 200, gap: 4, monthHeight: 60, dayHeight: 40, utc: true };
const picture = (date: string, width = 300, height = 200): Sized => ({ date: `${date}T12:00:00.000Z`, width, height });
const rows = (blocks: Block[]) => blocks.filter((block): block is Extract<Block, { kind: 'row' }> => block.kind === 'row');

describe('the photo timeline’s layout', () => {
  it('puts each day under its month, newest first, with headings in people’s words', () => {
    const { blocks } = layoutTimeline(
      [picture('2025-07-15'), picture('2025-07-14'), picture('2025-07-14'), picture('2024-12-24')],
      OPTIONS,
    );
    expect(blocks.filter((block) => block.kind !== 'row').map((block) => [block.kind, block.label])).toEqual([
      ['month', expect.stringMatching(/July 2025/)],
      ['day', expect.stringMatching(/15/)],
      ['day', expect.stringMatching(/14/)],
      ['month', expect.stringMatching(/December 2024/)],
      ['day', expect.stringMatching(/24.*2024|2024.*24/)],
    ]);
  });

  it('fills every full row to the column’s width exactly, at the pictures’ own proportions', () => {
    // Wide, tall and square pictures on one day: rows of mixed shapes.
    const sizes: [number, number][] = [
      [300, 200],
      [200, 300],
      [400, 400],
      [640, 480],
      [1600, 400],
      [300, 200],
      [200, 300],
      [500, 500],
      [300, 200],
    ];
    const items = sizes.map(([w, h]) => picture('2025-07-14', w, h));
    const laidOut = rows(layoutTimeline(items, OPTIONS).blocks);
    expect(laidOut.length).toBeGreaterThan(1);
    for (const row of laidOut.slice(0, -1)) {
      const last = row.tiles[row.tiles.length - 1]!;
      expect(last.left + last.width).toBeCloseTo(OPTIONS.width, 6);
      for (const tile of row.tiles) {
        const [w, h] = sizes[tile.index]!;
        expect(tile.width / row.height).toBeCloseTo(w / h, 6);
      }
    }
    // The day's last row keeps the height rows aim at rather than stretching a lone picture.
    expect(laidOut[laidOut.length - 1]!.height).toBeLessThanOrEqual(OPTIONS.rowHeight);
    expect(laidOut.flatMap((row) => row.tiles.map((tile) => tile.index))).toEqual(sizes.map((_, i) => i));
  });

  it('shows a picture under the day it was taken where it was taken, wherever the viewer is', () => {
    // Two pictures 40 minutes apart in Tokyo, either side of its midnight: one day apart there.
    const { blocks } = layoutTimeline(
      [
        { date: '2019-06-01T15:10:00.000Z', localDate: '2019-06-02T00:10:00.000' },
        { date: '2019-06-01T14:30:00.000Z', localDate: '2019-06-01T23:30:00.000' },
      ],
      { ...OPTIONS, utc: false },
    );
    expect(blocks.filter((block) => block.kind === 'day').map((block) => block.label)).toEqual([
      expect.stringMatching(/\b2\b/),
      expect.stringMatching(/\b1\b/),
    ]);
  });

  it('lays a picture of unknown size out as a square', () => {
    const [row] = rows(layoutTimeline([{ date: '2025-07-14T00:00:00.000Z' }], OPTIONS).blocks);
    expect(row!.tiles[0]!.width).toBe(row!.height);
  });

  it('gives each block its own place, one under the other, and the whole its height', () => {
    const items = Array.from({ length: 10_000 }, (_, i) =>
      picture(new Date(Date.UTC(2025, 0, 1) - i * 3_600_000).toISOString().slice(0, 10)),
    );
    const { blocks, height } = layoutTimeline(items, OPTIONS);
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]!.top).toBeGreaterThanOrEqual(blocks[i - 1]!.top + blocks[i - 1]!.height);
    const last = blocks[blocks.length - 1]!;
    expect(height).toBeGreaterThanOrEqual(last.top + last.height);
    expect(rows(blocks).reduce((sum, row) => sum + row.tiles.length, 0)).toBe(10_000);

    // A window's worth, anywhere in the timeline: the blocks that overlap it, and only those.
    for (const from of [0, height / 3, height - 800]) {
      const shown = blocksBetween(blocks, from, from + 800);
      const expected = blocks.filter((block) => block.top < from + 800 && block.top + block.height >= from);
      expect(shown).toEqual(expected);
      expect(shown.length).toBeLessThan(20);
    }
  });
});
