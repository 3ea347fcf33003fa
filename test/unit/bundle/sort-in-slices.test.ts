import { describe, expect, it } from 'vitest';
import { sortInSlices } from '../../../src/bundle/sort-in-slices.ts';

/** Paths as a bundle at the entry cap has them, in a shuffled order (seeded: the same every run). */
function shuffledPaths(count: number): string[] {
  const paths = Array.from({ length: count }, (_, i) => `e/${Math.floor(i / 500)}/${i}.html`);
  let seed = 42;
  for (let i = paths.length - 1; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [paths[i], paths[j]] = [paths[j] as string, paths[i] as string];
  }
  return paths;
}

describe('sortInSlices', () => {
  it.each([0, 1, 2, 8191, 8192, 8193, 50_000])('sorts %i paths as sort() does', async (count) => {
    const paths = shuffledPaths(count);
    expect(await sortInSlices([...paths], 10)).toEqual([...paths].sort());
  });

  it('sorts by UTF-16 code units, duplicates kept', async () => {
    const input = ['b', 'B', 'é', 'a/b', 'a', 'a-b', 'b', '\u{1F600}', 'z'];
    expect(await sortInSlices([...input], 10)).toEqual([...input].sort());
  });

  it('lets other callbacks run while it sorts', async () => {
    let ranDuring = false;
    let done = false;
    setImmediate(() => {
      ranDuring = !done;
    });
    await sortInSlices(shuffledPaths(40_000), 0);
    done = true;
    expect(ranDuring).toBe(true);
  });
});
