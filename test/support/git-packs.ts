// Hand-made Git packs and repositories shaped to cost a client memory, as an attacker builds them:
// a delta of repeated copies (a few hundred bytes that build hundreds of MiB), a zero-filled file,
// a tip of many small files, many refs. Shared by the hostile tests and the benchmark.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { type GitServer, runGit } from './git-server.ts';

const BLOB = 3;
const OFS_DELTA = 6;

export function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** A delta header's size: 7 bits a byte, least significant first. */
function deltaSize(size: number): Buffer {
  const bytes: number[] = [];
  let rest = size;
  do {
    const byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    bytes.push(rest > 0 ? byte | 0x80 : byte);
  } while (rest > 0);
  return Buffer.from(bytes);
}

/** Git's pack offset encoding of `back` bytes to the base. */
function ofsBack(back: number): Buffer {
  const bytes = [back & 0x7f];
  let rest = Math.floor(back / 128);
  while (rest > 0) {
    rest -= 1;
    bytes.unshift(0x80 | (rest & 0x7f));
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

/** `parts` as a pack of `count` objects with its checksum. */
export function pack(count: number, parts: Buffer[]): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(count, 8);
  const body = Buffer.concat([header, ...parts]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

export function packedBlob(data: Buffer): Buffer {
  return Buffer.concat([objectHeader(BLOB, data.length), deflateSync(data)]);
}

/** A blob's id, from its bytes given in pieces (a large one is never held whole). */
function blobId(size: number, pieces: Iterable<Buffer>): string {
  const hash = createHash('sha1').update(`blob ${size}\0`);
  for (const piece of pieces) hash.update(piece);
  return hash.digest('hex');
}

const COPY_SIZE = 0x10000;

/**
 * A 64 KiB zero-filled base and a delta of `copies` copies of it: a pack of a few hundred bytes
 * whose second blob is `copies` × 64 KiB of zeros. Their ids are given.
 */
export function deltaBomb(copies: number): { pack: Buffer; base: string; bomb: string; bombSize: number } {
  const zeros = Buffer.alloc(COPY_SIZE);
  const base = packedBlob(zeros);
  const bombSize = copies * COPY_SIZE;
  // 0x80 alone: copy 0x10000 bytes (size 0 means 64 KiB) from offset 0.
  const instructions = Buffer.concat([deltaSize(COPY_SIZE), deltaSize(bombSize), Buffer.alloc(copies, 0x80)]);
  const delta = Buffer.concat([
    objectHeader(OFS_DELTA, instructions.length),
    ofsBack(base.length),
    deflateSync(instructions),
  ]);
  return {
    pack: pack(2, [base, delta]),
    base: blobId(COPY_SIZE, [zeros]),
    bomb: blobId(
      bombSize,
      (function* () {
        for (let i = 0; i < copies; i++) yield zeros;
      })(),
    ),
    bombSize,
  };
}

/** The values file every hostile repository carries beside its payload. */
export const HOSTILE_VALUES = 'staticExport:\n  version: "sha256-old"\n';

/** Objects stored in `name`'s bare repository: loose or from a pack. */
function commitEntries(server: GitServer, name: string, entries: string, message: string): void {
  const bare = server.gitDir(name);
  const values = runGit(['hash-object', '-w', '--stdin'], { cwd: bare, input: HOSTILE_VALUES }).trim();
  const index = join(server.root, `${name}.index`);
  const env = { GIT_INDEX_FILE: index, GIT_DIR: bare };
  runGit(['read-tree', '--empty'], { env });
  runGit(['update-index', '--index-info'], {
    env,
    input: `100644 ${values}\tdeploy/values.yaml\n${entries}`,
  });
  const tree = runGit(['write-tree'], { env }).trim();
  const commit = runGit(['commit-tree', tree, '-m', message], { env }).trim();
  runGit(['update-ref', 'refs/heads/main', commit], { env });
}

function bareRepo(server: GitServer, name: string): string {
  const bare = server.gitDir(name);
  runGit(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  runGit(['config', 'http.receivepack', 'true'], { cwd: bare });
  return bare;
}

/** A tip holding a zero-filled file of `bytes` (it compresses to a thousandth). */
export function zeroFilledRepo(server: GitServer, name: string, bytes: number): void {
  const bare = bareRepo(server, name);
  const big = runGit(['hash-object', '-w', '--stdin'], { cwd: bare, input: Buffer.alloc(bytes) }).trim();
  commitEntries(server, name, `100644 ${big}\tassets/zeros.bin\n`, 'zeros');
}

/** A tip holding the delta bomb of `copies` × 64 KiB and its base, stored as the hand-made pack. */
export function deltaBombRepo(server: GitServer, name: string, copies: number): { pack: Buffer } {
  const bare = bareRepo(server, name);
  const bomb = deltaBomb(copies);
  runGit(['index-pack', '--stdin'], { cwd: bare, input: bomb.pack });
  commitEntries(
    server,
    name,
    `100644 ${bomb.base}\tassets/base.bin\n100644 ${bomb.bomb}\tassets/bomb.bin\n`,
    'a delta of copies',
  );
  return { pack: bomb.pack };
}

/** A tip of `files` small files, each its own blob. */
export function manyFilesRepo(server: GitServer, name: string, files: number): void {
  const bare = bareRepo(server, name);
  const lines: string[] = [];
  for (let i = 0; i < files; i++) {
    const data = `file ${i}\n`;
    lines.push(`M 100644 inline files/${Math.floor(i / 1000)}/f${i}.txt\ndata ${data.length}\n${data}`);
  }
  runGit(['fast-import', '--quiet'], {
    cwd: bare,
    input: `commit refs/heads/files\ncommitter A <a@example.com> 1700000000 +0000\ndata 5\nfiles\n${lines.join('\n')}\n`,
  });
  const entries = runGit(['ls-tree', '-r', 'refs/heads/files'], { cwd: bare });
  runGit(['update-ref', '-d', 'refs/heads/files'], { cwd: bare });
  commitEntries(server, name, entries, 'many files');
}

/** A small tip and `refs` more branches on it, about 70 bytes each of the ref advertisement. */
export function manyRefsRepo(server: GitServer, name: string, refs: number): void {
  bareRepo(server, name);
  commitEntries(server, name, '', 'many refs');
  const bare = server.gitDir(name);
  const head = runGit(['rev-parse', 'refs/heads/main'], { cwd: bare }).trim();
  const lines = ['# pack-refs with: peeled fully-peeled sorted'];
  for (let i = 0; i < refs; i++) lines.push(`${head} refs/heads/branch-${String(i).padStart(8, '0')}`);
  writeFileSync(join(bare, 'packed-refs'), `${lines.join('\n')}\n`);
}
