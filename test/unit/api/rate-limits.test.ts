// Which limit a 429 on a start is, and how long a server may make the client wait.
import { describe, expect, it } from 'vitest';
import { classifyStartRefusal, MAX_SERVER_DELAY_MS, parseRetryAfter } from '../../../src/api/rate-limits.ts';

describe('classifyStartRefusal', () => {
  it.each([
    // The vendor's two wordings decide, whatever the Retry-After.
    ['Rate limit exceeded. At most 10 job starts per organization per hour.', 30_000, 'hourly'],
    ['Rate limit exceeded. At most 10 job starts per organization per hour.', undefined, 'hourly'],
    ['Too many requests. Please try again later.', 60_000, 'perMinute'],
    ['Too many requests. Please try again later.', undefined, 'perMinute'],
    ['Too many requests. Please try again later.', 1_800_000, 'perMinute'],
    // Unknown wording: the Retry-After's magnitude.
    ['slow down', 60_000, 'perMinute'],
    ['slow down', 120_000, 'perMinute'],
    ['slow down', 121_000, 'hourly'],
    [undefined, 1_000, 'perMinute'],
    [undefined, undefined, 'hourly'],
  ] as const)('"%s" with Retry-After %s ms: %s', (message, retryAfterMs, expected) => {
    expect(classifyStartRefusal(message, retryAfterMs)).toBe(expected);
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates, clamped to 0..a day', () => {
    expect(parseRetryAfter('60')).toBe(60_000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    expect(parseRetryAfter('99999999999999')).toBe(MAX_SERVER_DELAY_MS);
    expect(parseRetryAfter(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT')).toBe(MAX_SERVER_DELAY_MS);
    expect(parseRetryAfter(['5', '7'])).toBe(5_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-5')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
