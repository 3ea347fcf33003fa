// A bundle link's check before it is written: one ranged GET of its first byte, through the
// download's own transport (node:http, its timeout, no redirect followed). A presigned link can die
// before its expiresAt (a revoked signing key, a bucket policy, an object removed): written, it
// would fail every pod started after, and nothing would notice until then.
import { describeLink } from '../redact.ts';
import { DEFAULT_TIMEOUT_MS, get } from './download.ts';
import { BundleError } from './errors.ts';
import type { LinkDestinations } from './link-destination.ts';

export interface ProbeOptions {
  /** Limit on waiting for the answer; the download's default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Where the link may lead (the download's own policy): refused before any connection. */
  destinations?: LinkDestinations;
}

/**
 * Resolves when the link serves its object (206, or 200 from a server that ignores Range: only its
 * headers are read). Throws a BundleError otherwise: Expired for 401/403 (refused: expired, revoked
 * or a bad signature), HttpStatus for any other answer, Network when none came.
 */
export async function probeLink(url: string, options: ProbeOptions = {}): Promise<void> {
  if (url.startsWith('file:')) return;
  let status: number;
  try {
    const response = await get(
      url,
      { range: 'bytes=0-0' },
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      options.signal,
      options.destinations,
    );
    status = response.statusCode ?? 0;
    response.destroy();
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new BundleError(
      'Network',
      `${describeLink(url)} did not answer a one-byte read: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (status === 200 || status === 206) return;
  if (status === 401 || status === 403)
    throw new BundleError(
      'Expired',
      `${describeLink(url)} answered ${status} to a one-byte read: the link is refused (expired, revoked or its signature invalid)`,
    );
  throw new BundleError('HttpStatus', `${describeLink(url)} answered HTTP ${status} to a one-byte read`);
}
