// Writes tar archives that depend on nothing but their content and the given time: the OCI image
// layer, the OCI layout archive and the simulator's export bundles. Entries come out in the order
// given, uid/gid 0 with no user names, mode 0755 for directories and 0644 for files (whatever the
// disk says), ustar headers with PAX records only for paths or link targets longer than ustar
// holds.

/** One tar entry as this module writes it. */
export interface TarEntry {
  /** Relative path with `/` separators (directories without a trailing slash). */
  path: string;
  kind: 'dir' | 'file' | 'symlink';
  size: number;
  target?: string;
}

/** An entry with its data: bytes in hand, or a stream of exactly `size` bytes read as it is written. */
export interface TarItem extends TarEntry {
  content?: Uint8Array | AsyncIterable<Uint8Array>;
}

/** A streamed entry gave more or fewer bytes than its header announced: the archive is broken. */
export class TarContentSizeError extends Error {
  override readonly name = 'TarContentSizeError';
}

const BLOCK = 512;
/** Two zero blocks end a tar archive. */
export const TAR_END_BYTES = 2 * BLOCK;
/** Headers and small contents are gathered into chunks of about this size. */
const BATCH_BYTES = 1024 * 1024;
const MODE = { dir: 0o755, file: 0o644, symlink: 0o777 } as const;

function writeString(block: Buffer, offset: number, length: number, value: string): void {
  block.write(value, offset, Math.min(length, Buffer.byteLength(value)), 'utf8');
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

function header(
  name: string,
  type: string,
  size: number,
  mode: number,
  mtimeSec: number,
  linkname = '',
): Buffer {
  const block = Buffer.alloc(BLOCK);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, mtimeSec);
  block.write(type, 156, 1, 'ascii');
  writeString(block, 157, 100, linkname);
  block.write('ustar\0' + '00', 257, 8, 'ascii');
  // Checksum: sum of the header bytes with the checksum field read as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  // The length counts its own digits.
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** Zero bytes after `size` bytes of data up to the next 512-byte block. */
export function tarPadding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/**
 * Header blocks of one entry (a PAX header first when a name does not fit ustar). `mtimeSec` is
 * whole seconds since the epoch; 0 keeps the bytes independent of when they were written.
 */
export function tarHeaders(entry: TarEntry, mtimeSec = 0): Buffer[] {
  const name = entry.kind === 'dir' ? `${entry.path}/` : entry.path;
  const target = entry.target ?? '';
  const records: string[] = [];
  if (Buffer.byteLength(name) > 100) records.push(paxRecord('path', name));
  if (Buffer.byteLength(target) > 100) records.push(paxRecord('linkpath', target));
  // Octal size field holds up to 8 GiB - 1.
  if (entry.size > 0o77777777777) records.push(paxRecord('size', String(entry.size)));
  const blocks: Buffer[] = [];
  if (records.length > 0) {
    const pax = Buffer.from(records.join(''), 'utf8');
    blocks.push(
      header('PaxHeaders/entry', 'x', pax.length, 0o644, mtimeSec),
      pax,
      Buffer.alloc(tarPadding(pax.length)),
    );
  }
  const type = entry.kind === 'dir' ? '5' : entry.kind === 'symlink' ? '2' : '0';
  const size = entry.kind === 'file' ? Math.min(entry.size, 0o77777777777) : 0;
  blocks.push(header(name.slice(0, 100), type, size, MODE[entry.kind], mtimeSec, target.slice(0, 100)));
  return blocks;
}

/** Bytes of the archive of `entries` (headers, data, padding, end blocks). */
export function tarSize(entries: TarEntry[]): number {
  let size = TAR_END_BYTES;
  for (const entry of entries) {
    for (const block of tarHeaders(entry)) size += block.length;
    if (entry.kind === 'file') size += entry.size + tarPadding(entry.size);
  }
  return size;
}

/**
 * The archive of `items`, end blocks included. Headers and in-hand contents are gathered so a
 * many-file archive is not sent one 512-byte chunk at a time; streamed contents pass through as
 * they come, so a large file never sits in memory. A stream that does not give exactly `size`
 * bytes fails the archive.
 */
export async function* tarStream(
  items: Iterable<TarItem> | AsyncIterable<TarItem>,
  options: { mtime?: Date } = {},
): AsyncGenerator<Uint8Array> {
  const mtimeSec = options.mtime ? Math.floor(options.mtime.getTime() / 1000) : 0;
  let batch: Uint8Array[] = [];
  let batched = 0;
  const add = (chunk: Uint8Array): void => {
    batch.push(chunk);
    batched += chunk.length;
  };
  const flush = function* (): Generator<Uint8Array> {
    if (batched > 0) yield Buffer.concat(batch, batched);
    batch = [];
    batched = 0;
  };
  for await (const item of items) {
    for (const block of tarHeaders(item, mtimeSec)) add(block);
    const content = item.kind === 'file' ? item.content : undefined;
    let written = 0;
    if (content instanceof Uint8Array) {
      add(content);
      written = content.length;
    } else if (content) {
      yield* flush();
      for await (const chunk of content) {
        written += chunk.length;
        if (written > item.size) break;
        yield chunk;
      }
    }
    if (item.kind === 'file' && written !== item.size)
      throw new TarContentSizeError(
        `tar entry ${item.path}: ${written} bytes of content for a size of ${item.size}`,
      );
    const pad = item.kind === 'file' ? tarPadding(item.size) : 0;
    if (pad > 0) add(Buffer.alloc(pad));
    if (batched >= BATCH_BYTES) yield* flush();
  }
  add(Buffer.alloc(TAR_END_BYTES));
  yield* flush();
}
