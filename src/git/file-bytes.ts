// A file's bytes as text for the YAML editor and back, byte for byte: bytes that are not UTF-8 (a
// Latin-1 comment) would become U+FFFD on decoding and be written back as such. Each of those bytes
// is decoded as a lone surrogate (U+DC80 to U+DCFF, as Python's "surrogateescape" does), which
// UTF-8 text can never hold, and encoded back to the very byte: every byte the edit does not
// replace is written as it was read.
import { isUtf8 } from 'node:buffer';

const ESCAPE = 0xdc00;

/** The length of a valid UTF-8 sequence at `i`, or 0 (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i] as number;
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const c = bytes[i + k];
    return c !== undefined && c >= lo && c <= hi;
  };
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const [lo, hi] = b === 0xe0 ? [0xa0, 0xbf] : b === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const [lo, hi] = b === 0xf0 ? [0x90, 0xbf] : b === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** `bytes` as text, each byte that is not part of valid UTF-8 as U+DC80 to U+DCFF. */
export function decodeFile(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer)) return buffer.toString('utf8');
  const parts: string[] = [];
  let run = 0; // start of the current run of valid UTF-8
  for (let i = 0; i < buffer.length; ) {
    const n = sequenceLength(buffer, i);
    if (n > 0) {
      i += n;
      continue;
    }
    parts.push(buffer.toString('utf8', run, i), String.fromCharCode(ESCAPE + (buffer[i] as number)));
    run = ++i;
  }
  parts.push(buffer.toString('utf8', run));
  return parts.join('');
}

// A lone low surrogate in the escape range: not after a high surrogate.
const ESCAPED = /(?<![\ud800-\udbff])[\udc80-\udcff]/g;

/** `text` as bytes: decodeFile's escapes as the bytes they stand for, the rest as UTF-8. */
export function encodeFile(text: string): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const match of text.matchAll(ESCAPED)) {
    parts.push(
      Buffer.from(text.slice(from, match.index), 'utf8'),
      Buffer.of(text.charCodeAt(match.index) - ESCAPE),
    );
    from = match.index + 1;
  }
  parts.push(Buffer.from(text.slice(from), 'utf8'));
  return Buffer.concat(parts);
}
