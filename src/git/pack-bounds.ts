// What a fetched pack inflates to, bounded before isomorphic-git indexes it. The transport bounds
// the bytes on the wire, but a pack is compressed: a 192 MiB zero-filled file is 196 KB of pack, a
// delta of repeated copies makes 256 MiB of 366 bytes, and isomorphic-git holds each object
// inflated (several times over) while it indexes them, and every tree's entries while it pushes.
// So the pack is walked first: its object count, each object's inflated size (a delta's: the size
// of the object it builds) and the trees' bytes are summed and refused past the limits, each
// object inflated at most to its declared size (a pack lying about one is refused too), nothing kept.
import * as fs from 'node:fs';
import { inflateSync } from 'node:zlib';
import { GitFailure } from './types.ts';

export interface PackLimits {
  /** Objects in the branch's tip: its commit, trees and files. */
  maxObjects: number;
  /** All objects inflated, as isomorphic-git builds them. */
  maxInflatedBytes: number;
  /** Tree objects inflated: each entry (about 40 bytes of a tree) costs an object when read. */
  maxTreeBytes: number;
}

/** A write within these costs about 200 MiB above the process's own memory (docs/benchmarks/2026-11-27.md). */
export const PACK_LIMITS: PackLimits = {
  maxObjects: 10_000,
  maxInflatedBytes: 32 * 1024 * 1024,
  maxTreeBytes: 2 * 1024 * 1024,
};

const COMMIT = 1;
const TREE = 2;
const TAG = 4;
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** A ref-delta's base is named by id, not found here: its object may be a tree. */
const UNKNOWN = 0;

const MIB = 1024 * 1024;
const size = (bytes: number) => (bytes >= MIB ? `${Math.round(bytes / MIB)} MiB` : `${bytes} bytes`);

function refuse(origin: string, why: string): never {
  throw new GitFailure(
    'GitUnsupported',
    `${origin} sent a branch tip that ${why}: write-back does not fetch a tip this large (a depth-1 fetch brings the whole tree, held in the operator's memory); keep the values file in a smaller repository or branch`,
  );
}

function malformed(origin: string): never {
  throw new GitFailure('GitUnreachable', `${origin} sent a pack that is not a valid Git pack`);
}

/** A pack's objects within `limits`, or a GitFailure saying which bound it passes. */
export function checkPack(pack: Buffer, limits: PackLimits, origin: string): void {
  if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') malformed(origin);
  const count = pack.readUInt32BE(8);
  if (count > limits.maxObjects)
    refuse(origin, `holds ${count} objects (files and directories), over ${limits.maxObjects}`);
  const end = pack.length - 20; // the trailer: a checksum
  const types = new Map<number, number>();
  let pos = 12;
  let inflated = 0;
  let trees = 0;
  for (let n = 0; n < count && pos < end; n++) {
    const offset = pos;
    let byte = pack[pos++] as number;
    let type = (byte >> 4) & 7;
    const delta = type === OFS_DELTA || type === REF_DELTA;
    let declared = byte & 15;
    for (let scale = 16; byte & 0x80; scale *= 128) {
      if (pos >= end || scale > 2 ** 45) malformed(origin);
      byte = pack[pos++] as number;
      declared += (byte & 0x7f) * scale;
    }
    if (type === OFS_DELTA) {
      // Git's offset encoding: 7 bits a byte, most significant first, each continuation adding one.
      byte = pack[pos++] as number;
      let back = byte & 0x7f;
      while (byte & 0x80) {
        if (pos >= end || back > 2 ** 40) malformed(origin);
        byte = pack[pos++] as number;
        back = (back + 1) * 128 + (byte & 0x7f);
      }
      type = types.get(offset - back) ?? malformed(origin);
    } else if (type === REF_DELTA) {
      pos += 20;
      type = UNKNOWN;
    } else if (type < COMMIT || type > TAG) malformed(origin);
    // Inflating a delta gives its instructions, which begin with the sizes of its base and its result.
    if (declared > limits.maxInflatedBytes - inflated)
      refuse(origin, `inflates to over ${size(limits.maxInflatedBytes)}`);
    let data: { buffer: Buffer; engine: { bytesWritten: number } };
    try {
      data = inflateSync(pack.subarray(pos, end), {
        info: true,
        maxOutputLength: Math.max(declared, 1),
      }) as unknown as typeof data;
    } catch {
      malformed(origin);
    }
    if (data.buffer.length !== declared) malformed(origin);
    pos += data.engine.bytesWritten;
    let built = declared;
    if (delta) {
      const header = { at: 0 };
      varint(data.buffer, header, origin); // the base's size
      built = varint(data.buffer, header, origin);
    }
    types.set(offset, type);
    inflated += built;
    if (inflated > limits.maxInflatedBytes)
      refuse(origin, `inflates to over ${size(limits.maxInflatedBytes)}`);
    if (type === TREE || type === UNKNOWN) {
      trees += built;
      if (trees > limits.maxTreeBytes)
        refuse(origin, `has directories listing over ${size(limits.maxTreeBytes)} of entries`);
    }
  }
}

/** A delta header's size: 7 bits a byte, least significant first. */
function varint(buffer: Buffer, cursor: { at: number }, origin: string): number {
  let value = 0;
  for (let scale = 1; ; scale *= 128) {
    if (cursor.at >= buffer.length || scale > 2 ** 45) malformed(origin);
    const byte = buffer[cursor.at++] as number;
    value += (byte & 0x7f) * scale;
    if (!(byte & 0x80)) return value;
  }
}

/**
 * `fs` for isomorphic-git with every pack written checked first: isomorphic-git writes a fetched
 * pack to disk before it indexes it, from the very buffer it then indexes.
 */
export function packCheckingFs(limits: PackLimits, origin: string): typeof fs {
  const promises = {
    ...fs.promises,
    writeFile: (path: string, data: Uint8Array | string, options?: fs.WriteFileOptions) => {
      if (/\/objects\/pack\/pack-[0-9a-f]+\.pack$/.test(String(path)) && typeof data !== 'string')
        checkPack(Buffer.from(data.buffer, data.byteOffset, data.byteLength), limits, origin);
      return fs.promises.writeFile(path, data, options);
    },
  };
  return { promises } as unknown as typeof fs;
}
