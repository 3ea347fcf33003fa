// Where the operator may send a credential a resource cannot read itself: the admin API key to
// spec.apiBaseUrl, a Git token to spec.gitWriteBack.url. Anyone allowed to create the resource
// can set the URL, usually without being allowed to read the Secret, so the URL must be one the
// operator was started with, and plain http only where the operator allows it.

export interface UrlPolicy {
  /** The URLs the operator's flags list. Empty: none is allowed. */
  allowed: readonly string[];
  /** Plain http where `AllowList.insecure` would refuse it. */
  allowInsecure: boolean;
}

/** One kind of destination: how its URLs compare, and what messages call it. */
export interface AllowList {
  /** E.g. "an admin API base URL this operator sends keys to". */
  what: string;
  /** The operator flag that lists the URLs, and the one that allows plain http. */
  listFlag: string;
  insecureFlag: string;
  /** The form URLs are compared in; undefined for anything but an absolute http(s) URL. */
  normalize(url: string): string | undefined;
  /** Why the credential must not go to `url` over plain http, or undefined when it may. */
  insecure(url: URL): string | undefined;
}

/** Origin and path without trailing slashes (user info, query and fragment are never sent). */
export function normalizeHttpUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** Why the credential must not go to `url` in clear text (an operator flag's entry), or undefined. */
export function insecureUrl(url: string, allowInsecure: boolean, list: AllowList): string | undefined {
  if (allowInsecure || !URL.canParse(url)) return undefined;
  const why = list.insecure(new URL(url));
  return why && `${list.normalize(url)} ${why}`;
}

// Answers by question: every reconcile asks about the same few URLs, and each answer parses
// several. Bounded: the URLs are anyone's to set.
const answers = new Map<string, string | undefined>();
const ANSWERS_MAX = 256;

/**
 * Why the credential must not go to `url` (from `field`, e.g. spec.apiBaseUrl): a message naming
 * the field, the allowed URLs and the operator flags that allow it; undefined when it may.
 */
export function urlRefusal(
  url: string,
  field: string,
  policy: UrlPolicy,
  list: AllowList,
): string | undefined {
  const question = [list.listFlag, url, field, policy.allowInsecure, ...policy.allowed].join('\u0000');
  if (answers.has(question)) return answers.get(question);
  const answer = refusal(url, field, policy, list);
  if (answers.size >= ANSWERS_MAX) answers.clear();
  answers.set(question, answer);
  return answer;
}

function refusal(url: string, field: string, policy: UrlPolicy, list: AllowList): string | undefined {
  const normalized = list.normalize(url);
  if (normalized === undefined) return `${field} ${url} is not an absolute http(s) URL`;
  const allowed = policy.allowed.map((u) => list.normalize(u));
  if (!allowed.includes(normalized)) {
    const names = allowed.filter(Boolean).join(', ') || 'none';
    return (
      `${field} ${normalized} is not ${list.what} (allowed: ${names}): ` +
      `use one of those, or add it to the operator flag ${list.listFlag}`
    );
  }
  const insecure = policy.allowInsecure ? undefined : list.insecure(new URL(url));
  if (insecure)
    return `${field} ${normalized} ${insecure}: use https, or start the operator with ${list.insecureFlag}`;
  return undefined;
}
