import { describe, expect, it } from 'vitest';
import { AdminApiClient, AdminKeyError, validateAdminKey } from '../../../src/api/index.ts';

describe('validateAdminKey', () => {
  it('accepts admin keys of the default and a custom prefix', () => {
    expect(validateAdminKey('mint_abc123')).toBe('mint_abc123');
    expect(validateAdminKey('acme_abc123', 'acme')).toBe('acme_abc123');
  });

  const secret = 'S3cretTail9';
  it.each([
    ['empty', '', /No admin API key/],
    ['undefined', undefined, /No admin API key/],
    ['whitespace', `mint_${secret}\n`, /whitespace/],
    ['inner space', `mint_${secret} x`, /whitespace/],
    ['public assistant key', `mint_dsc_${secret}`, /public assistant key.*not an admin key/],
    ['wrong prefix', `sk_${secret}`, /expected form "mint_…"/],
    ['prefix only', 'mint_', /expected form/],
    ['no underscore', `mint${secret}`, /expected form/],
  ])('refuses %s without quoting the key', (_name, key, message) => {
    let caught: unknown;
    try {
      validateAdminKey(key);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AdminKeyError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain(secret);
  });

  it('refuses public keys of a custom prefix but not of another vendor', () => {
    expect(() => validateAdminKey('acme_dsc_x', 'acme')).toThrow(/public assistant key/);
    expect(() => validateAdminKey('mint_dsc_x', 'acme')).toThrow(/expected form "acme_…"/);
  });

  it('is applied by the client constructor', () => {
    expect(() => new AdminApiClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'mint_dsc_abc' })).toThrow(
      AdminKeyError,
    );
    expect(() => new AdminApiClient({ baseUrl: 'ftp://x', apiKey: 'mint_abc' })).toThrow(/http or https/);
  });
});
