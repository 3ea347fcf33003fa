// The platform answers 429 for two limits (VENDOR-FACTS): about 100 admin requests per key and
// minute ("Too many requests. Please try again later.", a short Retry-After) and 10 export starts
// per organization and hour ("Rate limit exceeded. …", naming the hour). A per-minute 429 is
// waited out and retried like any refused request; only the hourly one blocks starts for a while.

/** Longest wait a server may ask for that the client believes: a day (anything above is clamped). */
export const MAX_SERVER_DELAY_MS = 86_400_000;

/**
 * A 429 of unknown wording with a Retry-After up to this long is the per-minute limit: the hourly
 * limit's next slot is usually further away, and a short wait costs little if that guess is wrong.
 */
const PER_MINUTE_RETRY_AFTER_MAX_MS = 120_000;

export type StartRefusal = 'hourly' | 'perMinute';

const HOURLY_WORDING = /\bhour(ly)?\b|\bper organi[sz]ation\b/i;
const PER_MINUTE_WORDING = /too many requests|\bminute\b/i;

/**
 * Which limit a 429 on a start is: the wording first (the hour named: hourly; "too many requests"
 * or a minute named: per-minute), else the Retry-After's magnitude (none, or longer than two
 * minutes: hourly).
 */
export function classifyStartRefusal(
  serverMessage: string | undefined,
  retryAfterMs: number | undefined,
): StartRefusal {
  if (serverMessage !== undefined && HOURLY_WORDING.test(serverMessage)) return 'hourly';
  if (serverMessage !== undefined && PER_MINUTE_WORDING.test(serverMessage)) return 'perMinute';
  return retryAfterMs !== undefined && retryAfterMs <= PER_MINUTE_RETRY_AFTER_MAX_MS ? 'perMinute' : 'hourly';
}

/**
 * A Retry-After header in milliseconds: delay-seconds or an HTTP date, clamped to 0..a day so a
 * hostile or broken value (`99999999999999`) can make no timer or date overflow.
 */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  // An HTTP date names its weekday and month; anything else that is not delay-seconds is no Retry-After.
  const ms = /^\d+$/.test(text)
    ? Number(text) * 1000
    : /[a-z]/i.test(text)
      ? Date.parse(text) - Date.now()
      : Number.NaN;
  return Number.isNaN(ms) ? undefined : clampServerDelay(ms);
}

/** A delay computed from a server's answer, within 0..MAX_SERVER_DELAY_MS. */
function clampServerDelay(ms: number): number {
  return Math.min(MAX_SERVER_DELAY_MS, Math.max(0, ms));
}
