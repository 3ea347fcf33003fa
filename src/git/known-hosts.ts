// OpenSSH's known_hosts, as Flux's GitRepository Secret carries it (key `known_hosts`): which host
// keys a server may present. Host patterns (`host`, `[host]:port`, `*`/`?` wildcards, `!` negation,
// hashed `|1|salt|hash` entries) and `@revoked` lines as sshd(8) reads them; `@cert-authority` lines
// are not supported (host certificates are not accepted) and say so.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface HostKey {
  /** The key's type as known_hosts names it: ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, … */
  type: string;
  /** The public key blob (the base64 field, decoded). */
  blob: Buffer;
}

export interface KnownHost {
  /** Keys the host may present. */
  keys: HostKey[];
  /** Keys refused even when listed (`@revoked`). */
  revoked: Buffer[];
  /** `@cert-authority` lines that match the host: not used. */
  certificateAuthorities: number;
}

/** The host key algorithms ssh2 may negotiate for a key type (RSA keys sign with SHA-2 too). */
const ALGORITHMS: Record<string, readonly string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/** How known_hosts names `host` on `port`: the bare name on 22, else `[host]:port`. */
export function knownHostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** The entries of `text` for `host` on `port`. Lines that do not parse are skipped, as ssh does. */
export function knownHost(text: string, host: string, port: number): KnownHost {
  const name = knownHostName(host.toLowerCase(), port);
  const found: KnownHost = { keys: [], revoked: [], certificateAuthorities: 0 };
  for (const raw of text.split(/\r?\n/)) {
    const fields = raw.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) continue;
    const marker = fields[0].startsWith('@') ? fields.shift() : undefined;
    const [patterns, type, base64] = fields;
    if (!patterns || !type || !base64 || !hostMatches(patterns, name)) continue;
    const blob = Buffer.from(base64, 'base64');
    if (marker === '@cert-authority') found.certificateAuthorities++;
    else if (marker === '@revoked') found.revoked.push(blob);
    else if (marker === undefined && blobType(blob) === type) found.keys.push({ type, blob });
  }
  return found;
}

/** Whether the server's key `blob` is one of the host's keys and not revoked. */
export function hostKeyKnown(known: KnownHost, blob: Buffer): boolean {
  const same = (b: Buffer) => b.length === blob.length && timingSafeEqual(b, blob);
  return !known.revoked.some(same) && known.keys.some((k) => same(k.blob));
}

/** The host key algorithms to offer: only those of the known keys, so the server presents one of them. */
export function hostKeyAlgorithms(known: KnownHost): string[] {
  return [...new Set(known.keys.flatMap((k) => ALGORITHMS[k.type] ?? []))];
}

/** The type a public key blob names (its first SSH string), or undefined. */
export function blobType(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const length = blob.readUInt32BE(0);
  if (length > 64 || 4 + length > blob.length) return undefined;
  return blob.subarray(4, 4 + length).toString('latin1');
}

/** A known_hosts host field (comma-separated patterns, or one hashed name) against `name`. */
function hostMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) return hashedMatches(field, name);
  let matched = false;
  for (const pattern of field.toLowerCase().split(',')) {
    const negated = pattern.startsWith('!');
    if (!wildcard(negated ? pattern.slice(1) : pattern).test(name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

function hashedMatches(field: string, name: string): boolean {
  const [, , salt, hash] = field.split('|');
  if (!salt || !hash) return false;
  const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  const expected = Buffer.from(hash, 'base64');
  return expected.length === mac.length && timingSafeEqual(mac, expected);
}

function wildcard(pattern: string): RegExp {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}
