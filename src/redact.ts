// Secrets that must never reach logs, events, CR status or error messages: the admin API key,
// trigger tokens and presigned bundle URLs (a presigned URL is a bearer credential). Everything user-visible that may
// carry text from elsewhere passes through `scrub`.

const BEARER = /(Bearer\s+)[^\s"',]+/gi;
// Links are found per token (a run without spaces, quotes or angle brackets), in whichever form
// they were written: plain, JSON-escaped (`https:\/\/`), or URL-encoded (`https%3A%2F%2F`).
const TOKEN = /[^\s"'<>`]+/g;
// scheme://[userinfo@]host[:port][/path][?query][#fragment]: userinfo, query and fragment may
// carry credentials (a presigned signature, a password, an access token); host and path stay.
const SCHEME_URL = /([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^/?#]*)([^?#]*)([?#].*)?/gi;
// The same without a scheme, starting the token or after `=`, `(` or `,`: a host with a dot (or
// localhost, or an IPv6 literal), then a path. Userinfo needs a colon here so an e-mail address stays.
const HOST = String.raw`(?:localhost|\[[0-9a-f:.]+\]|(?:[a-z0-9-]+\.)+[a-z0-9-]+)(?::\d+)?`;
const SCHEMELESS_URL = new RegExp(
  String.raw`(^|[=(,;])(\/\/)?([^\s/?#@=(,;]+:[^\s/?#@]*@)?(${HOST})(\/[^?#]*|(?=[?#]))([?#].*)?$`,
  'i',
);
const SCHEMELESS_USERINFO = new RegExp(String.raw`(^|[=(,;])[^\s/?#@=(,;]+:[^\s/?#@]*@(?=${HOST})`, 'i');
// Path-style presigned links carry their signature in the path: as matrix parameters of a segment
// (`bundle.tar.gz;sig=…`) or as a `name=value` segment (`/sig=…/bundle.tar.gz`). Those go too.
const PATH_SECRET = /;[^/]*|(?<=\/)[^/;]*=[^/]*/g;
// Whatever is left that looks like a query string (`?name=...`) is dropped too.
const QUERY = /\?[\w.~%-]+=.*$/;
const ENCODED = /%(?:2[35F]|3[ADF]|40)/i;

// Registered secrets by their last TAIL characters, with their order of registration: `scrub`
// finds those in a text with one look-up per position instead of searching the text for every
// secret (the operator registers every bundle link: thousands, searched for in every event).
const TAIL = 8;
const secretsByTail = new Map<string, string[]>();
const registered = new Map<string, number>();
let registrations = 0;

// A secret that expires (a bundle link, a registry token) is forgotten an hour after it expires:
// messages about a request made with it come well within that, and a long-running operator
// registers a link per export and a token per registry visit (every interval of every OCI
// release), which would otherwise be kept for the life of the process.
const FORGET_AFTER_EXPIRY_MS = 60 * 60_000;
const SWEEP_EVERY_MS = 60_000;
/** When each expiring secret is forgotten; secrets without an expiry are not in here. */
const forgetAt = new Map<string, number>();
let nextSweep = 0;

/**
 * Registers a secret value (e.g. an API key read from a Secret) so `scrub` removes it anywhere;
 * with `expiresAt`, only until an hour after that (a value also registered without one is kept).
 */
export function registerSecret(value: string | undefined, expiresAt?: Date | number): void {
  if (!value || value.length < TAIL) return;
  const now = Date.now();
  if (now >= nextSweep) forgetExpired(now);
  const permanent = registered.has(value) && !forgetAt.has(value);
  if (expiresAt === undefined) forgetAt.delete(value);
  else if (!permanent) {
    const at = Number(expiresAt) + FORGET_AFTER_EXPIRY_MS;
    forgetAt.set(value, Math.max(at, forgetAt.get(value) ?? at));
  }
  if (registered.has(value)) return;
  registered.set(value, registrations++);
  const tail = value.slice(-TAIL);
  const same = secretsByTail.get(tail);
  if (same) same.push(value);
  else secretsByTail.set(tail, [value]);
}

function forgetExpired(now: number): void {
  nextSweep = now + SWEEP_EVERY_MS;
  for (const [value, at] of forgetAt) {
    if (at > now) continue;
    forgetAt.delete(value);
    registered.delete(value);
    const tail = value.slice(-TAIL);
    const rest = (secretsByTail.get(tail) ?? []).filter((s) => s !== value);
    if (rest.length > 0) secretsByTail.set(tail, rest);
    else secretsByTail.delete(tail);
  }
}

/** The registered secrets `text` contains, in the order they were registered. */
function secretsIn(text: string): string[] {
  const found = new Set<string>();
  if (registered.size === 0) return [];
  for (let end = TAIL; end <= text.length; end++) {
    const candidates = secretsByTail.get(text.slice(end - TAIL, end));
    if (!candidates) continue;
    for (const s of candidates) if (s.length <= end && text.startsWith(s, end - s.length)) found.add(s);
  }
  return [...found].sort((a, b) => (registered.get(a) ?? 0) - (registered.get(b) ?? 0));
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
}

function redactPath(path: string): string {
  return path.replace(PATH_SECRET, (part) => (part.startsWith(';') ? ';[REDACTED]' : '[REDACTED]'));
}

function redactTail(tail: string | undefined): string {
  if (!tail) return '';
  return tail.startsWith('?') ? '?[REDACTED]' : '#[REDACTED]';
}

// Every pattern below needs one of these: a token without them is returned as it is, unsearched.
const MAY_HIDE = /[/?#@%]/;

/** An ssh:// URL's user (`git@`) names an account, not a credential: kept unless it holds a password. */
function sshUser(scheme: string, userinfo: string): string {
  return /^ssh:\/\/$/i.test(scheme) && !userinfo.includes(':') ? userinfo : '[REDACTED]@';
}

function scrubToken(token: string): string {
  if (!MAY_HIDE.test(token)) return token;
  let text = token.replaceAll('\\/', '/');
  // Links nested in links or forms may be encoded more than once.
  for (let i = 0; i < 3 && ENCODED.test(text); i++) text = percentDecode(text);
  let clean = text.replace(
    SCHEME_URL,
    (_, scheme: string, userinfo: string | undefined, host: string, path: string, tail: string | undefined) =>
      `${scheme}${userinfo ? sshUser(scheme, userinfo) : ''}${host}${redactPath(path)}${redactTail(tail)}`,
  );
  if (clean === text) {
    clean = text
      .replace(
        SCHEMELESS_URL,
        (
          _,
          lead: string,
          slashes = '',
          userinfo: string | undefined,
          host: string,
          path: string,
          tail?: string,
        ) => `${lead}${slashes}${userinfo ? '[REDACTED]@' : ''}${host}${redactPath(path)}${redactTail(tail)}`,
      )
      .replace(SCHEMELESS_USERINFO, '$1[REDACTED]@');
  }
  clean = clean.replace(QUERY, '?[REDACTED]');
  // A token without anything secret is returned as written (not decoded).
  return clean === text ? token : clean;
}

export function scrub(text: string): string {
  let out = text.replace(BEARER, '$1[REDACTED]').replace(TOKEN, scrubToken);
  for (const secret of secretsIn(out)) {
    if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}

// A file name a link may end with (`bundle.tar.gz`): short, with an extension.
const FILE_NAME = /^[\w.-]{1,64}\.[a-z0-9]{1,8}$/i;

/**
 * Describes a link for humans as scheme, host and at most its file name
 * (`https://cdn.example.com/…/bundle.tar.gz`): a presigned link is a credential wherever it
 * carries its signature (query, path segments, matrix parameters), so none of those is printed.
 */
export function describeLink(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === 'file:') return u.pathname;
    const root = `${u.protocol}//${u.host}/`;
    if (u.pathname === '/') return root;
    const segments = u.pathname.split('/');
    const last = segments.at(-1)?.split(';')[0] ?? '';
    if (!FILE_NAME.test(last)) return `${root}…`;
    return `${root}${segments.length > 2 ? '…/' : ''}${last}`;
  } catch {
    return '[invalid URL]';
  }
}

/** Describes a URL that is no credential (an API's base URL) for humans: origin and path only. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '[invalid URL]';
  }
}
