import { describe, expect, it } from 'vitest';
import {
  apiBaseUrlRefusal,
  insecureApiBaseUrl,
  isLoopback,
  normalizeApiBaseUrl,
} from '../../../src/api/base-url-policy.ts';

const policy = (allowed: string[], allowInsecure = false) => ({ allowed, allowInsecure });

describe('apiBaseUrlRefusal', () => {
  it('answers the same URL again by the policy and field asked with, not by an earlier answer', () => {
    const url = 'http://api.example.com';
    expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', policy([url], true))).toBeUndefined();
    expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', policy([url]))).toMatch(/^spec.apiBaseUrl .*plain http/);
    expect(apiBaseUrlRefusal(url, 'The flag', policy([url]))).toMatch(/^The flag .*plain http/);
    expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', policy(['https://other.example.com'], true))).toMatch(
      /not an admin API base URL/,
    );
    expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', policy([url], true))).toBeUndefined();
  });

  it('allows the base URLs the operator was given, however they are spelled', () => {
    const p = policy(['https://api.example.com', 'https://eu.example.com/api/']);
    for (const url of [
      'https://api.example.com',
      'https://api.example.com/',
      'https://API.example.com:443',
      'https://eu.example.com/api',
    ])
      expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', p)).toBeUndefined();
  });

  it('refuses any other URL, naming the field, the allowed ones and the operator flag', () => {
    const p = policy(['https://api.example.com']);
    for (const url of [
      'https://attacker.example.net',
      'https://api.example.com.attacker.example.net',
      'https://api.example.com:8443',
      'https://api.example.com/other',
      'http://api.example.com',
    ]) {
      const why = apiBaseUrlRefusal(url, 'spec.apiBaseUrl', p);
      expect(why).toMatch(/^spec\.apiBaseUrl .* is not an admin API base URL this operator sends keys to/);
      expect(why).toContain('allowed: https://api.example.com');
      expect(why).toContain('--allowed-api-base-urls');
    }
    expect(apiBaseUrlRefusal('https://x.example.com', 'spec.apiBaseUrl', policy([]))).toContain(
      'allowed: none',
    );
  });

  it('refuses plain http to a host that is not loopback even when listed, unless insecure is allowed', () => {
    const p = policy(['http://api.internal:8080']);
    const why = apiBaseUrlRefusal('http://api.internal:8080', 'spec.apiBaseUrl', p);
    expect(why).toMatch(/plain http .* unencrypted/);
    expect(why).toContain('--allow-insecure-api-base-url');
    expect(
      apiBaseUrlRefusal('http://api.internal:8080', 'spec.apiBaseUrl', { ...p, allowInsecure: true }),
    ).toBe(undefined);
  });

  it('allows plain http to loopback when listed', () => {
    for (const url of ['http://127.0.0.1:8787', 'http://localhost:8787/', 'http://[::1]:8787'])
      expect(apiBaseUrlRefusal(url, 'spec.apiBaseUrl', policy([url]))).toBeUndefined();
  });

  it('refuses what is not an http(s) URL', () => {
    expect(
      apiBaseUrlRefusal('ftp://api.example.com', 'spec.apiBaseUrl', policy(['ftp://api.example.com'])),
    ).toMatch(/not an absolute http\(s\) URL/);
  });
});

describe('helpers', () => {
  it('normalizes to origin and path as the client sends them', () => {
    expect(normalizeApiBaseUrl('https://user:pw@API.example.com:443/v1//?q=1#f')).toBe(
      'https://api.example.com/v1',
    );
    expect(normalizeApiBaseUrl('api.example.com')).toBeUndefined();
  });

  it('knows loopback hosts', () => {
    expect(['localhost', '127.0.0.1', '127.1.2.3', '[::1]', 'a.localhost'].every(isLoopback)).toBe(true);
    expect(['10.0.0.1', '127.0.0.1.nip.io', 'localhost.example.com', '[::2]'].some(isLoopback)).toBe(false);
  });

  it('insecureApiBaseUrl says why plain http to another host is refused', () => {
    expect(insecureApiBaseUrl('http://10.0.0.1', false)).toMatch(/plain http/);
    expect(insecureApiBaseUrl('http://10.0.0.1', true)).toBeUndefined();
    expect(insecureApiBaseUrl('https://10.0.0.1', false)).toBeUndefined();
  });
});
