// Presigned bundle links, S3 style: the signature covers the job id and the expiry, so a link
// cannot be extended or pointed at another job; the link itself is the credential.

import { createHmac, timingSafeEqual } from 'node:crypto';

export function bundlePath(jobId: string): string {
  return `/bundles/${encodeURIComponent(jobId)}/bundle.tar.gz`;
}

/**
 * Where a link carries its signature, as object stores differ: the query string (S3's query
 * authentication), matrix parameters of its last segment, or path segments before the file name.
 */
export const LINK_STYLES = ['query', 'matrix', 'path'] as const;
export type LinkStyle = (typeof LINK_STYLES)[number];

function signature(secret: Buffer, jobId: string, expiresSec: number): string {
  return createHmac('sha256', secret).update(`${jobId}\n${expiresSec}`).digest('hex');
}

export function signBundleUrl(
  baseUrl: string,
  secret: Buffer,
  jobId: string,
  expiresSec: number,
  style: LinkStyle = 'query',
): string {
  const sig = signature(secret, jobId, expiresSec);
  const job = encodeURIComponent(jobId);
  if (style === 'matrix')
    return new URL(`/bundles/${job}/bundle.tar.gz;expires=${expiresSec};sig=${sig}`, baseUrl).toString();
  if (style === 'path')
    return new URL(`/bundles/${job}/${expiresSec}/${sig}/bundle.tar.gz`, baseUrl).toString();
  const url = new URL(bundlePath(jobId), baseUrl);
  url.searchParams.set('expires', String(expiresSec));
  url.searchParams.set('sig', sig);
  return url.toString();
}

/** A download's job and the link's credentials, wherever its style put them. */
export interface BundleLink {
  jobId: string;
  expires?: string;
  sig?: string;
}

/** The bundle link `url` is; undefined for another path. */
export function parseBundleLink(url: string): BundleLink | undefined {
  const { pathname, searchParams } = new URL(url, 'http://sim');
  let seg: string[];
  try {
    seg = pathname.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (seg[0] !== 'bundles' || !seg[1]) return undefined;
  const of = (expires?: string | null, sig?: string | null) => ({
    jobId: seg[1] as string,
    ...(expires ? { expires } : {}),
    ...(sig ? { sig } : {}),
  });
  if (seg.length === 5 && seg[4] === 'bundle.tar.gz') return of(seg[2], seg[3]);
  const [name, ...params] = (seg.length === 3 ? (seg[2] ?? '') : '').split(';');
  if (name !== 'bundle.tar.gz') return undefined;
  if (params.length === 0) return of(searchParams.get('expires'), searchParams.get('sig'));
  const matrix = new Map(params.map((p) => [p.split('=')[0] ?? '', p.split('=')[1] ?? '']));
  return of(matrix.get('expires'), matrix.get('sig'));
}

export type LinkCheck =
  | { ok: true }
  | { ok: false; code: 'AccessDenied' | 'SignatureDoesNotMatch'; message: string };

export function checkBundleLink(secret: Buffer, link: BundleLink, nowMs: number): LinkCheck {
  const { jobId, expires: expiresText, sig } = link;
  if (!expiresText || !sig) {
    return {
      ok: false,
      code: 'AccessDenied',
      message: 'Query-string authentication requires expires and sig',
    };
  }
  const expiresSec = Number(expiresText);
  const expected = Buffer.from(signature(secret, jobId, expiresSec));
  const given = Buffer.from(sig);
  if (!/^\d+$/.test(expiresText) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided',
    };
  }
  if (nowMs >= expiresSec * 1000) return { ok: false, code: 'AccessDenied', message: 'Request has expired' };
  return { ok: true };
}

type ByteRange = { start: number; end: number };

/**
 * Parses a `Range` header for a resource of `size` bytes. Returns the range, `'unsatisfiable'`
 * (answer 416), or undefined to serve the whole resource (no header, another unit, several
 * ranges or bad syntax: RFC 9110 lets a server ignore those).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
