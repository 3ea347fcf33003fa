// Secrets that must never reach logs, events, CR status or error messages: the admin API key and
// presigned bundle URLs (a presigned URL is a bearer credential). Everything user-visible that may
// carry text from elsewhere passes through `scrub`.

const BEARER = /(Bearer\s+)[^\s"',]+/gi;
// Any URL with a query string may be presigned: keep scheme, host and path, drop the query.
const URL_WITH_QUERY = /\b(https?:\/\/[^\s"'<>?#]+)\?[^\s"'<>#]*/gi;

const knownSecrets = new Set<string>();

/** Registers a secret value (e.g. an API key read from a Secret) so `scrub` removes it anywhere. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8) knownSecrets.add(value);
}

export function scrub(text: string): string {
  let out = text.replace(BEARER, '$1[REDACTED]').replace(URL_WITH_QUERY, '$1?[REDACTED]');
  for (const secret of knownSecrets) {
    if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}

/** Describes a URL for humans without its credentials: origin and path only. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '[invalid URL]';
  }
}
