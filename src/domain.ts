// The one definition of a site's domain, used by the CLI (--domain), the StaticExportRelease CRD
// (spec.domain, enforced by zod and by the API server's CEL) and the bundle mirror (the domain
// becomes a directory name). RE2-compatible (no lookaround) so CEL runs the same pattern.

/**
 * A bare, lowercase DNS host name with at least two labels of at most 63 characters; the last label
 * starts with a letter, so IP addresses are refused, and `localhost` (one label) too. The 253
 * characters limit is a separate length check (MAX_DOMAIN_LENGTH).
 */
export const BARE_HOST_PATTERN = '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?[.])+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$';
export const MAX_DOMAIN_LENGTH = 253;

/** What a good value looks like; callers put the field name in front. */
export const BARE_HOST_RULE =
  'a bare lowercase host name such as docs.example.com: no scheme (https://), port, path or trailing ' +
  'slash, not localhost or an IP address, labels of at most 63 characters';

const BARE_HOST = new RegExp(BARE_HOST_PATTERN);

export function isBareHost(value: string): boolean {
  return value.length <= MAX_DOMAIN_LENGTH && BARE_HOST.test(value);
}
