import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeLink, registerSecret, scrub } from '../../src/redact.ts';

const SECRET = /sig=|abc123|hunter2|ghp_token|access_token/;

describe('describeLink', () => {
  it.each([
    [
      'a query',
      'https://cdn.example.com/b/bundle.tar.gz?expires=1&sig=abc123',
      'https://cdn.example.com/…/bundle.tar.gz',
    ],
    [
      'matrix parameters',
      'https://cdn.example.com/b/bundle.tar.gz;sig=abc123',
      'https://cdn.example.com/…/bundle.tar.gz',
    ],
    [
      'a signature segment',
      'https://s.example.com/bucket/abc123/bundle.tar.gz',
      'https://s.example.com/…/bundle.tar.gz',
    ],
    ['a signature as the last segment', 'https://s.example.com/dl/abc123', 'https://s.example.com/…'],
    [
      'userinfo and a port',
      'http://bot:hunter2@127.0.0.1:8787/bundle.tar.gz',
      'http://127.0.0.1:8787/bundle.tar.gz',
    ],
    ['no path', 'https://cdn.example.com/?sig=abc123', 'https://cdn.example.com/'],
  ])('prints a link with %s as scheme, host and at most its file name', (_, link, expected) => {
    expect(describeLink(link)).toBe(expected);
    expect(describeLink(link)).not.toMatch(SECRET);
  });

  it('prints a file: URL as its path, and an invalid URL as such', () => {
    expect(describeLink('file:///mnt/mirror/docs.example.com/bundle.tar.gz')).toBe(
      '/mnt/mirror/docs.example.com/bundle.tar.gz',
    );
    expect(describeLink('not a link ;sig=abc123')).toBe('[invalid URL]');
  });
});

describe('scrub', () => {
  it.each([
    [
      'a plain link',
      'GET https://cdn.example.com/b/bundle.tar.gz?expires=1&sig=abc123 failed',
      'GET https://cdn.example.com/b/bundle.tar.gz?[REDACTED] failed',
    ],
    [
      'a link without a scheme',
      'got cdn.example.com/b.tar.gz?X-Amz-Signature=abc123',
      'got cdn.example.com/b.tar.gz?[REDACTED]',
    ],
    [
      'an IP link without a scheme',
      "bad '127.0.0.1:8787/bundles/se_1/bundle.tar.gz?sig=abc123'",
      "bad '127.0.0.1:8787/bundles/se_1/bundle.tar.gz?[REDACTED]'",
    ],
    [
      'a protocol-relative link',
      'at //cdn.example.com/b.tar.gz?sig=abc123',
      'at //cdn.example.com/b.tar.gz?[REDACTED]',
    ],
    [
      'a flag value',
      '--url=cdn.example.com/b.tar.gz?sig=abc123',
      '--url=cdn.example.com/b.tar.gz?[REDACTED]',
    ],
    [
      'a URL-encoded link',
      'next=https%3A%2F%2Fcdn.example.com%2Fb.tar.gz%3Fsig%3Dabc123',
      'next=https://cdn.example.com/b.tar.gz?[REDACTED]',
    ],
    [
      'a twice URL-encoded link',
      'u=https%253A%252F%252Fcdn.example.com%252Fb%253Fsig%253Dabc123',
      'u=https://cdn.example.com/b?[REDACTED]',
    ],
    [
      'a JSON-escaped link',
      '{"bundleUrl":"https:\\/\\/cdn.example.com\\/b.tar.gz?sig=abc123"}',
      '{"bundleUrl":"https://cdn.example.com/b.tar.gz?[REDACTED]"}',
    ],
    [
      'userinfo',
      'clone https://bot:hunter2@git.example.com/docs.git',
      'clone https://[REDACTED]@git.example.com/docs.git',
    ],
    [
      'a token as user name',
      'https://ghp_token@github.com/acme/docs',
      'https://[REDACTED]@github.com/acme/docs',
    ],
    [
      'JSON-escaped userinfo',
      '"https:\\/\\/bot:hunter2@git.example.com\\/x"',
      '"https://[REDACTED]@git.example.com/x"',
    ],
    [
      "an ssh:// URL's user (an account, not a credential), but not a password",
      'push to ssh://git@github.com/acme/docs.git and ssh://git:hunter2@git.example.com/x',
      'push to ssh://git@github.com/acme/docs.git and ssh://[REDACTED]@git.example.com/x',
    ],
    [
      'userinfo without a scheme',
      'proxy bot:hunter2@proxy.example.com:3128/',
      'proxy [REDACTED]@proxy.example.com:3128/',
    ],
    [
      'a fragment',
      'open https://docs.example.com/cb#access_token=abc123',
      'open https://docs.example.com/cb#[REDACTED]',
    ],
    [
      'a fragment after a query',
      'https://h.example.com/x?sig=abc123#frag',
      'https://h.example.com/x?[REDACTED]',
    ],
    [
      'a fragment without a scheme',
      'docs.example.com/cb#access_token=abc123',
      'docs.example.com/cb#[REDACTED]',
    ],
    ['a bearer token', 'Authorization: Bearer mint_abc123', 'Authorization: Bearer [REDACTED]'],
    [
      'matrix parameters',
      'GET https://cdn.example.com/b/bundle.tar.gz;sig=abc123 failed',
      'GET https://cdn.example.com/b/bundle.tar.gz;[REDACTED] failed',
    ],
    [
      'matrix parameters without a scheme',
      'got cdn.example.com/b/bundle.tar.gz;expires=1;sig=abc123',
      'got cdn.example.com/b/bundle.tar.gz;[REDACTED]',
    ],
    [
      'a signature as a path segment',
      'GET https://storage.example.com/bucket/sig=abc123/bundle.tar.gz failed',
      'GET https://storage.example.com/bucket/[REDACTED]/bundle.tar.gz failed',
    ],
  ])('removes the secret part of %s', (_, text, expected) => {
    const clean = scrub(text);
    expect(clean).toBe(expected);
    expect(clean).not.toMatch(SECRET);
  });

  it.each([
    'export se_123 of docs.example.com: running, 12 pages, 3s',
    '--url must be an http(s) bundle link or a file:// URL of a mirrored bundle.tar.gz.',
    'https://api.example.com/v2/export/se_1/status answered 503',
    'file:///mnt/mirror/docs.example.com/sha256-ab/bundle.tar.gz',
    'write admin@example.com about /tmp/values.yaml.1a2b.tmp (50% done?)',
    'a%2Fb stays as written',
  ])('leaves text without secrets as it is: %s', (text) => {
    expect(scrub(text)).toBe(text);
  });

  it('removes registered secrets wherever they stand, among thousands registered', () => {
    for (let i = 0; i < 3000; i++) registerSecret(`http://127.0.0.1:1/bundles/se_${i}/bundle.tar.gz`);
    registerSecret('mint_key0000000001');
    // The same last characters as the key: both are found.
    registerSecret('other_key0000000001');
    registerSecret('short');
    expect(scrub('mint_key0000000001')).toBe('[REDACTED]');
    expect(scrub('a mint_key0000000001, b other_key0000000001 c mint_key0000000001')).toBe(
      'a [REDACTED], b [REDACTED] c [REDACTED]',
    );
    expect(scrub('got http://127.0.0.1:1/bundles/se_2999/bundle.tar.gz')).toBe('got [REDACTED]');
    expect(scrub('got http://127.0.0.1:1/bundles/se_3000/bundle.tar.gz')).toBe(
      'got http://127.0.0.1:1/bundles/se_3000/bundle.tar.gz',
    );
    // Under 8 characters nothing is registered: it would redact ordinary words.
    expect(scrub('short of time')).toBe('short of time');
  });

  describe('expiring secrets', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const HOUR = 3_600_000;

    it('forgets a secret an hour after it expires (swept at most once a minute, on a registration)', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const start = Date.now();
      registerSecret('link_expiring_0001', start + HOUR);
      vi.setSystemTime(start + 2 * HOUR - 1000);
      registerSecret('link_expiring_0002', start + 3 * HOUR);
      expect(scrub('got link_expiring_0001')).toBe('got [REDACTED]');
      vi.setSystemTime(start + 2 * HOUR + 61_000);
      registerSecret('link_expiring_0003', start + 3 * HOUR);
      expect(scrub('got link_expiring_0001 and link_expiring_0002')).toBe(
        'got link_expiring_0001 and [REDACTED]',
      );
    });

    it('keeps a secret registered again with a later expiry until that one', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const start = Date.now();
      registerSecret('token_renewed_0001', start);
      registerSecret('token_renewed_0001', start + 5 * HOUR);
      vi.setSystemTime(start + 3 * HOUR);
      registerSecret('token_renewed_0002', start + 5 * HOUR);
      expect(scrub('token_renewed_0001')).toBe('[REDACTED]');
    });

    it('never forgets a secret that was also registered without an expiry', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const start = Date.now();
      registerSecret('api_key_for_good_0001');
      registerSecret('api_key_for_good_0001', start);
      registerSecret('api_key_for_good_0002', start);
      registerSecret('api_key_for_good_0002');
      vi.setSystemTime(start + 100 * HOUR);
      registerSecret('link_expiring_0004', start + 101 * HOUR);
      expect(scrub('api_key_for_good_0001 api_key_for_good_0002')).toBe('[REDACTED] [REDACTED]');
    });
  });
});
