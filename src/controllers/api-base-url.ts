// Where the operator may send an admin key. Anyone allowed to create a StaticExportRelease or
// AgentJob can set spec.apiBaseUrl, usually without being allowed to read the key Secret: the
// key goes only to base URLs the operator was started with, and over plain http only to loopback
// unless the operator allows it explicitly.

interface ApiBaseUrlPolicy {
  /** The base URLs keys may be sent to: --api-base-url and --allowed-api-base-urls. */
  allowed: readonly string[];
  /** Plain http to hosts other than loopback (--allow-insecure-api-base-url). */
  allowInsecure: boolean;
}

/**
 * The base URL as the admin API client uses it: origin and path without trailing slashes (query,
 * fragment and user info are never sent). Undefined for anything but an absolute http(s) URL.
 */
export function normalizeApiBaseUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

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

/** Why a base URL must not carry a key in clear text, or undefined when it may. */
export function insecureApiBaseUrl(url: string, allowInsecure: boolean): string | undefined {
  if (allowInsecure || !URL.canParse(url)) return undefined;
  const u = new URL(url);
  if (u.protocol !== 'http:' || isLoopback(u.hostname)) return undefined;
  return `${normalizeApiBaseUrl(url)} uses plain http to a host that is not loopback: the admin key would cross the network unencrypted`;
}

// Answers by question: every reconcile asks about the same few URLs, and each answer parses
// several. Bounded: spec.apiBaseUrl is anyone's to set.
const answers = new Map<string, string | undefined>();
const ANSWERS_MAX = 256;

/**
 * Whether the key may be sent to `url` (from `field`, e.g. spec.apiBaseUrl); a message naming the
 * field and the operator flags that allow it when not.
 */
export function apiBaseUrlRefusal(url: string, field: string, policy: ApiBaseUrlPolicy): string | undefined {
  const question = [url, field, policy.allowInsecure, ...policy.allowed].join('\u0000');
  if (answers.has(question)) return answers.get(question);
  const answer = refusal(url, field, policy);
  if (answers.size >= ANSWERS_MAX) answers.clear();
  answers.set(question, answer);
  return answer;
}

function refusal(url: string, field: string, policy: ApiBaseUrlPolicy): string | undefined {
  const normalized = normalizeApiBaseUrl(url);
  if (normalized === undefined) return `${field} ${url} is not an absolute http(s) URL`;
  const allowed = policy.allowed.map(normalizeApiBaseUrl);
  if (!allowed.includes(normalized)) {
    const list = allowed.filter(Boolean).join(', ') || 'none';
    return (
      `${field} ${normalized} is not an admin API base URL this operator sends keys to (allowed: ${list}): ` +
      'use one of those, or add it to the operator flag --allowed-api-base-urls'
    );
  }
  const insecure = insecureApiBaseUrl(url, policy.allowInsecure);
  if (insecure) {
    return `${field} ${insecure}: use https, or start the operator with --allow-insecure-api-base-url`;
  }
  return undefined;
}
