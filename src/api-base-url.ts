// The one rule for an admin API base URL's path, used by the CLI (--api-url), the operator's flags
// (--api-base-url, --allowed-api-base-urls) and the CRDs (spec.apiBaseUrl, by zod and CEL).
// The platform's OpenAPI files give its server as https://api.mintlify.com/v1, with paths relative
// to it; the client writes the version itself (/v1/static-export/..., /v2/agent/...), as the
// contract does. A base URL ending in a version would send every call to /v1/v1/... and get 404s
// that look like a wrong project: refused where the URL is given (CLI flag, operator flag,
// spec.apiBaseUrl through zod and CEL), with the URL to use instead.

/** The platform's admin API base URL, as this project's flags and spec.apiBaseUrl take it. */
export const PLATFORM_API_BASE_URL = 'https://api.mintlify.com';

/**
 * An absolute URL whose path ends in an API version (/v1, /v2/), query and fragment aside: the
 * client adds that segment itself. Over the whole string, RE2-compatible: the API server's CEL
 * takes it as is (a rule on url(self).getEscapedPath() costs over its budget).
 */
export const VERSIONED_URL_PATTERN = '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*(/[^?#]*)?/v[0-9]+/*([?#].*)?$';
const VERSIONED_URL = new RegExp(VERSIONED_URL_PATTERN);

/** The message for a base URL ending in a version, naming `field` (a flag or spec.apiBaseUrl). */
export function versionedBaseUrlMessage(field: string): string {
  return (
    `${field} must not end in /v1: the client adds /v1/... (and /v2/agent/...) itself. ` +
    `Give the base URL without it, e.g. ${PLATFORM_API_BASE_URL}`
  );
}

/** Why `url` cannot be an admin API base URL because it ends in a version, or undefined. */
export function versionedBaseUrlRefusal(url: string, field: string): string | undefined {
  return VERSIONED_URL.test(url) ? versionedBaseUrlMessage(field) : undefined;
}
