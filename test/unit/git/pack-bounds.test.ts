// What a fetched pack inflates to is bounded before anything inflates it whole: hand-made packs
// as an attacker makes them (a delta of copies, a lying size, many objects, a huge directory).
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { checkPack, PACK_LIMITS } from '../../../src/git/pack-bounds.ts';
import { GitFailure } from '../../../src/git/types.ts';
import { deltaBomb, objectHeader, pack, packedBlob } from '../../support/fixtures/git-packs.ts';

const ORIGIN = 'https://git.example.com';

function refusal(bytes: Buffer, limits = PACK_LIMITS): GitFailure | undefined {
  try {
    checkPack(bytes, limits, ORIGIN);
    return undefined;
  } catch (error) {
    if (error instanceof GitFailure) return error;
    throw error;
  }
}

describe('checkPack', () => {
  it('a pack within the bounds passes: blobs and a delta building a small one', () => {
    const small = deltaBomb(2); // 128 KiB built from 64 KiB
    expect(refusal(small.pack)).toBeUndefined();
    expect(
      refusal(
        pack(3, [
          packedBlob(Buffer.from('a\n')),
          packedBlob(Buffer.from('b\n')),
          packedBlob(Buffer.alloc(0)),
        ]),
      ),
    ).toBeUndefined();
  });

  it('a delta of copies (a few hundred bytes building 256 MiB): refused by what it builds, nothing built', () => {
    const bomb = deltaBomb(4096);
    expect(bomb.pack.length).toBeLessThan(1024);
    const before = process.memoryUsage().arrayBuffers;
    const failure = refusal(bomb.pack);
    expect(failure?.reason).toBe('GitUnsupported');
    expect(failure?.message).toBe(
      `${ORIGIN} sent a branch tip that inflates to over 32 MiB: write-back does not fetch a tip this large (a depth-1 fetch brings the whole tree, held in the operator's memory); keep the values file in a smaller repository or branch`,
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('a zero-filled blob declaring its size: refused before it is inflated', () => {
    const header = objectHeader(3, 256 * 1024 * 1024); // a blob
    const zeros = deflateSync(Buffer.alloc(1024 * 1024));
    expect(refusal(pack(1, [header, zeros]))?.message).toContain('inflates to over 32 MiB');
  });

  it('a blob inflating to more than it declares: refused as not a valid pack, inflated no further than declared', () => {
    const liar = packedBlob(Buffer.from('ab'));
    const body = Buffer.concat([Buffer.from([0x30 | 2]), deflateSync(Buffer.alloc(64 * 1024 * 1024))]);
    expect(refusal(pack(1, [body]))).toMatchObject({
      reason: 'GitUnreachable',
      message: `${ORIGIN} sent a pack that is not a valid Git pack`,
    });
    expect(refusal(pack(1, [liar]))).toBeUndefined();
  });

  it('more objects than the bound (a tip of many small files): refused by the count in its header', () => {
    const failure = refusal(pack(100_000, []));
    expect(failure?.message).toContain('holds 100000 objects (files and directories), over 10000');
  });

  it('directories listing more than the tree bound: refused (each entry costs an object when read)', () => {
    const tree = Buffer.alloc(3 * 1024 * 1024, 'x');
    const header = objectHeader(2, tree.length); // a tree
    expect(refusal(pack(1, [header, deflateSync(tree)]))?.message).toContain(
      'has directories listing over 2 MiB of entries',
    );
  });

  it('not a pack, or a delta whose base is not in it: refused as not a valid pack', () => {
    expect(refusal(Buffer.from('not a pack at all, but long enough to have a header'))?.reason).toBe(
      'GitUnreachable',
    );
    const orphan = Buffer.concat([Buffer.from([0x60 | 3, 0x05]), deflateSync(Buffer.from([1, 1, 0x90, 1]))]);
    expect(refusal(pack(1, [orphan]))?.reason).toBe('GitUnreachable');
  });
});
