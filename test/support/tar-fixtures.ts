// Crafts tar archives byte by byte, so tests can build entries no well-behaved tar tool would
// write (absolute paths, `..`, escaping links, device nodes, lying sizes).
import { gzipSync } from 'node:zlib';

export type TarEntryType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'chardev' | 'blockdev' | 'fifo';

export interface TarEntrySpec {
  path: string;
  type?: TarEntryType;
  content?: string | Buffer;
  /** Size written in the header; defaults to the content length (a larger value makes a lying header). */
  declaredSize?: number;
  linkpath?: string;
  /** Seconds since the epoch. */
  mtime?: number;
  mode?: number;
}

const TYPE_FLAGS: Record<TarEntryType, string> = {
  file: '0',
  hardlink: '1',
  symlink: '2',
  chardev: '3',
  blockdev: '4',
  dir: '5',
  fifo: '6',
};

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(spec: TarEntrySpec, size: number): Buffer {
  const block = Buffer.alloc(512);
  const type = spec.type ?? 'file';
  block.write(spec.path, 0, 100, 'utf8');
  block.write(octal(spec.mode ?? (type === 'dir' ? 0o755 : 0o644), 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(spec.mtime ?? 1_700_000_000, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(TYPE_FLAGS[type], 156, 'ascii');
  if (spec.linkpath) block.write(spec.linkpath, 157, 100, 'utf8');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

export function tarBuffer(entries: TarEntrySpec[]): Buffer {
  const blocks: Buffer[] = [];
  for (const spec of entries) {
    const content =
      typeof spec.content === 'string' ? Buffer.from(spec.content) : (spec.content ?? Buffer.alloc(0));
    blocks.push(header(spec, spec.declaredSize ?? content.length), content);
    const padding = (512 - (content.length % 512)) % 512;
    if (padding) blocks.push(Buffer.alloc(padding));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export function tarGz(entries: TarEntrySpec[], level = 6): Buffer {
  return gzipSync(tarBuffer(entries), { level });
}

/** A small but realistic site. */
export function siteEntries(mtime = 1_700_000_000): TarEntrySpec[] {
  return [
    { path: 'index.html', content: '<h1>Home</h1>', mtime },
    { path: 'assets/', type: 'dir', mtime },
    { path: 'assets/site.css', content: 'body{margin:0}', mtime },
    { path: 'guides/', type: 'dir', mtime },
    { path: 'guides/start.html', content: '<h1>Start</h1>', mtime },
  ];
}
