// Presigned bundle links, S3 style: the signature covers the job id and the expiry, so a link
// cannot be extended or pointed at another job; the link itself is the credential.

import { createHmac, timingSafeEqual } from 'node:crypto';

export function bundlePath(jobId: string): string {
  return `/bundles/${encodeURIComponent(jobId)}/bundle.tar.gz`;
}

function signature(secret: Buffer, jobId: string, expiresSec: number): string {
  return createHmac('sha256', secret).update(`${jobId}\n${expiresSec}`).digest('hex');
}

export function signBundleUrl(baseUrl: string, secret: Buffer, jobId: string, expiresSec: number): string {
  const url = new URL(bundlePath(jobId), baseUrl);
  url.searchParams.set('expires', String(expiresSec));
  url.searchParams.set('sig', signature(secret, jobId, expiresSec));
  return url.toString();
}

export type LinkCheck =
  | { ok: true }
  | { ok: false; code: 'AccessDenied' | 'SignatureDoesNotMatch'; message: string };

export function checkBundleLink(
  secret: Buffer,
  jobId: string,
  query: URLSearchParams,
  nowMs: number,
): LinkCheck {
  const expiresText = query.get('expires');
  const sig = query.get('sig');
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

export type ByteRange = { start: number; end: number };

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
