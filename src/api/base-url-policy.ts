// Where the operator may send an admin key (src/url-allow-list.ts): the base URLs the
// operator was started with, and over plain http only to loopback unless it allows it explicitly.
import {
  type AllowList,
  insecureUrl,
  normalizeHttpUrl,
  type UrlPolicy,
  urlRefusal,
} from '../url-allow-list.ts';

/** The base URL as the admin API client uses it: origin and path without trailing slashes. */
export const normalizeApiBaseUrl = normalizeHttpUrl;

/** `localhost`, 127.0.0.0/8 or ::1: traffic that never leaves the machine (or the pod). */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

const CLEAR_TEXT =
  'uses plain http to a host that is not loopback: the admin key would cross the network unencrypted';

/** Why a base URL must not carry a key in clear text, or undefined when it may. */
export function insecureApiBaseUrl(url: string, allowInsecure: boolean): string | undefined {
  return insecureUrl(url, allowInsecure, API_BASE_URLS);
}

const API_BASE_URLS: AllowList = {
  what: 'an admin API base URL this operator sends keys to',
  listFlag: '--allowed-api-base-urls',
  insecureFlag: '--allow-insecure-api-base-url',
  normalize: normalizeApiBaseUrl,
  insecure: (u) => (u.protocol === 'http:' && !isLoopback(u.hostname) ? CLEAR_TEXT : undefined),
};

/**
 * Whether the key may be sent to `url` (from `field`, e.g. spec.apiBaseUrl); a message naming the
 * field and the operator flags that allow it when not.
 */
export function apiBaseUrlRefusal(url: string, field: string, policy: UrlPolicy): string | undefined {
  return urlRefusal(url, field, policy, API_BASE_URLS);
}
