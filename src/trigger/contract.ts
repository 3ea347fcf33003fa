// The trigger's wire contract, shared by the receiver (operator) and its client (`static-export
// trigger`): GitHub/Flux-style `X-Signature: sha256=<hex>`, an HMAC-SHA256 with the release's
// token over `<timestamp>.<body>`, where `X-Timestamp` is Unix seconds. Signing the timestamp
// with the body is what makes an old captured call useless once it leaves the window.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-signature';
export const TIMESTAMP_HEADER = 'x-timestamp';
/** A call whose timestamp is further than this from the receiver's clock is a replay. */
export const MAX_CLOCK_SKEW_S = 300;
/** Bodies are opaque and small (a pipeline may say what it published); larger ones get 413. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Calls per release and minute by default: a pipeline or two, not a loop. */
export const DEFAULT_TRIGGER_REQUESTS_PER_MINUTE = 6;
/** `POST /hooks/<namespace>/<name>`. */
export const HOOK_PATH_PREFIX = '/hooks/';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const UNIX_SECONDS = /^\d{1,12}$/;

/** The token as both sides use it: a Secret or token file written with a final newline still matches. */
export function normalizeToken(raw: string): string {
  return raw.trim();
}

function hmac(token: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac('sha256', token).update(`${timestamp}.`).update(body).digest();
}

/** The `X-Signature` header value for a call made at `timestamp` (Unix seconds). */
export function sign(token: string, timestamp: string, body: Uint8Array): string {
  return `sha256=${hmac(token, timestamp, body).toString('hex')}`;
}

/** Unix seconds from an `X-Timestamp` header, or undefined when it is not one. */
export function parseTimestamp(header: string | undefined): number | undefined {
  return header !== undefined && UNIX_SECONDS.test(header) ? Number(header) : undefined;
}

/** Whether `timestamp` (Unix seconds) is within MAX_CLOCK_SKEW_S of `nowMs`, either way. */
export function withinWindow(timestamp: number, nowMs: number): boolean {
  return Math.abs(nowMs / 1000 - timestamp) <= MAX_CLOCK_SKEW_S;
}

/** Whether the header is a well-formed signature (checked before anything is read for it). */
export function isSignatureHeader(header: string | undefined): header is string {
  return header !== undefined && SIGNATURE.test(header);
}

/** Constant-time comparison of the presented signature with the one `token` gives. */
export function verify(token: string, timestamp: string, body: Uint8Array, header: string): boolean {
  const presented = SIGNATURE.exec(header)?.[1];
  if (!presented) return false;
  return timingSafeEqual(Buffer.from(presented.toLowerCase(), 'hex'), hmac(token, timestamp, body));
}
