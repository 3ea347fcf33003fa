// The trigger's wire contract and the receiver's checks that need no API call.
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, normalizeToken, sign, verify, withinWindow } from '../../../src/trigger/contract.ts';
import { type Admitted, admit, type CallHead } from '../../../src/trigger/receiver.ts';

const body = Buffer.from('{"id":"x"}');
const NOW = Date.parse('2026-11-22T12:00:00Z');
const ts = String(NOW / 1000);

describe('signature', () => {
  it('is the HMAC-SHA256 of "<timestamp>.<body>", as openssl computes it', () => {
    // printf '1700000000.{"id":"x"}' | openssl dgst -sha256 -hmac secret-token
    expect(sign('secret-token', '1700000000', body)).toBe(
      'sha256=027035cf734b3d4e0fa405bf1f8cc4296b5b23fc594b6be08b4ac316cd0e30cc',
    );
  });

  it('verifies only the same token, timestamp and body (hex in either case)', () => {
    const s = sign('t0ken', ts, body);
    expect(verify('t0ken', ts, body, s)).toBe(true);
    expect(verify('t0ken', ts, body, s.toUpperCase().replace('SHA256', 'sha256'))).toBe(true);
    expect(verify('other', ts, body, s)).toBe(false);
    expect(verify('t0ken', String(Number(ts) + 1), body, s)).toBe(false);
    expect(verify('t0ken', ts, Buffer.from('{"id":"y"}'), s)).toBe(false);
    expect(verify('t0ken', ts, body, 'sha256=abc')).toBe(false);
    expect(verify('t0ken', ts, body, s.replace('sha256=', 'sha1='))).toBe(false);
  });

  it('ignores whitespace around the token, as a Secret or file written with a newline has', () => {
    expect(normalizeToken('  t0ken\n')).toBe('t0ken');
  });

  it('accepts timestamps within 5 minutes either way', () => {
    expect(withinWindow(NOW / 1000 - 300, NOW)).toBe(true);
    expect(withinWindow(NOW / 1000 + 300, NOW)).toBe(true);
    expect(withinWindow(NOW / 1000 - 301, NOW)).toBe(false);
    expect(withinWindow(NOW / 1000 + 301, NOW)).toBe(false);
  });
});

describe('admit', () => {
  const head = (over: Partial<CallHead> = {}): CallHead => ({
    method: 'POST',
    url: '/hooks/docs/site',
    contentLength: String(body.length),
    timestamp: ts,
    signature: sign('t0ken', ts, body),
    ...over,
  });
  const status = (over: Partial<CallHead>, namespaces: string[] = []) => {
    const r = admit(head(over), namespaces, NOW);
    return 'status' in r ? r.status : 0;
  };

  it('passes a well-formed call on, with what to check next', () => {
    expect(admit(head({ url: '/hooks/docs/site?x=1' }), ['docs'], NOW)).toEqual({
      namespace: 'docs',
      name: 'site',
      timestamp: ts,
      signature: sign('t0ken', ts, body),
    } satisfies Admitted);
  });

  it.each([
    ['another path', { url: '/metrics' }, 404],
    ['a path without the name', { url: '/hooks/docs' }, 404],
    ['a path with more parts', { url: '/hooks/docs/site/x' }, 404],
    ['a name that is no object name', { url: '/hooks/docs/Site_1' }, 404],
    ['GET', { method: 'GET' }, 405],
    ['a body over the cap', { contentLength: String(MAX_BODY_BYTES + 1) }, 413],
    ['no signature', { signature: undefined }, 401],
    ['a signature of another kind', { signature: 'sha1=abcd' }, 401],
    ['no timestamp', { timestamp: undefined }, 401],
    ['a timestamp in milliseconds', { timestamp: String(NOW) }, 401],
    ['a date for a timestamp', { timestamp: '2026-11-22T12:00:00Z' }, 401],
    ['a timestamp 6 minutes old', { timestamp: String(NOW / 1000 - 360) }, 401],
  ])('refuses %s', (_, over, expected) => {
    expect(status(over)).toBe(expected);
  });

  it('answers 404 for a namespace the operator does not watch', () => {
    expect(status({}, ['blog'])).toBe(404);
    expect(status({}, ['blog', 'docs'])).toBe(0);
  });

  it('says how to sign an unsigned call', () => {
    const r = admit(head({ signature: undefined }), [], NOW);
    expect('message' in r && r.message).toBe(
      'sign the call: x-timestamp: <Unix seconds> and x-signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the release\'s token>',
    );
  });
});
