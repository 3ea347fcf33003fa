import { describe, expect, it } from 'vitest';
import { scrub } from '../../../src/redact.ts';
import { type Secret, wantedContent } from '../../../src/sync/secret.ts';

const KEYS = { bundleUrl: 'bundleUrl', version: 'version', ociReference: 'ociReference' };
const V = `sha256-${'a'.repeat(64)}`;
const LINK = 'https://cdn.example.com/b/bundle.tar.gz?X-Amz-Signature=deadbeef1234';

function secret(data: Record<string, string>): Secret {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
  return { metadata: { name: 'site', namespace: 'docs' }, data: encoded };
}

describe('what the values Secret asks to serve', () => {
  it('takes the version and the bundle link, and scrubs the link from later output', () => {
    expect(wantedContent(secret({ version: V, bundleUrl: LINK }), KEYS)).toEqual({
      wanted: { version: V, source: { url: LINK } },
    });
    expect(scrub(`failed: ${LINK}`)).not.toContain('deadbeef1234');
  });

  it('prefers the site image when both are set, as fetch does', () => {
    const oci = `registry.example.com/docs@sha256:${'b'.repeat(64)}`;
    expect(wantedContent(secret({ version: V, bundleUrl: LINK, ociReference: oci }), KEYS)).toEqual({
      wanted: { version: V, source: { oci } },
    });
  });

  it('reads the keys the flags name', () => {
    const keys = { bundleUrl: 'url', version: 'v', ociReference: 'image' };
    expect(wantedContent(secret({ v: V, url: LINK }), keys)).toEqual({
      wanted: { version: V, source: { url: LINK } },
    });
  });

  it('names the Secret and the key when the version is missing, empty or not a content version', () => {
    expect(wantedContent(secret({ bundleUrl: LINK }), KEYS)).toEqual({
      problem: expect.stringMatching(
        /^Secret docs\/site has no key "version" or it is empty: .*--version-key/,
      ),
    });
    expect(wantedContent(secret({ version: ' ', bundleUrl: LINK }), KEYS)).toEqual({
      problem: expect.stringContaining('no key "version" or it is empty'),
    });
    expect(wantedContent(secret({ version: '../x', bundleUrl: LINK }), KEYS)).toEqual({
      problem: expect.stringContaining('Secret docs/site key "version" is not a content version'),
    });
  });

  it('names both source keys when neither is set', () => {
    expect(wantedContent({ metadata: { name: 'site', namespace: 'docs' }, data: null }, KEYS)).toEqual({
      problem: expect.stringContaining('no key "version"'),
    });
    expect(wantedContent(secret({ version: V, bundleUrl: '' }), KEYS)).toEqual({
      problem: expect.stringMatching(/neither key "bundleUrl" nor key "ociReference".*--bundle-url-key/),
    });
  });

  it('refuses a link that is no URL without quoting it', () => {
    const result = wantedContent(secret({ version: V, bundleUrl: 'ftp://x.example.com/secret-sig' }), KEYS);
    expect(result).toEqual({
      problem: expect.stringContaining('key "bundleUrl" is not an http(s) bundle link'),
    });
    expect(JSON.stringify(result)).not.toContain('secret-sig');
  });
});
