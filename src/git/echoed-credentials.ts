// What a hostile or careless Git server may echo back of the credentials it was sent: the token
// itself, the `username:token` pair, either in base64 (what `Authorization: Basic` carries, with or
// without that prefix, padded or not, standard or URL-safe) or URL-encoded. Server text is redacted
// of all of them before it is cut to length, so a cut can never leave part of one behind.
import type { GitCredentials } from './types.ts';

/** Shorter values are left alone: every occurrence of their letters would go. */
const MIN_SECRET = 4;

/** The forms of `credentials` a server may echo, longest first. */
function echoedForms(credentials: GitCredentials): string[] {
  if (credentials.kind !== 'basic') return [];
  const { username, password } = credentials;
  const pair = `${username}:${password}`;
  const forms = new Set<string>();
  for (const plain of [pair, password]) {
    forms.add(plain);
    forms.add(encodeURIComponent(plain));
    // Unpadded: a server that drops the padding still echoes this prefix.
    for (const encoding of ['base64', 'base64url'] as const)
      forms.add(Buffer.from(plain).toString(encoding).replace(/=+$/, ''));
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
}

/** Server text redacted of the credentials and cut to `max` characters (see redactor). */
export type Redact = (text: string, max: number) => string;

/**
 * A Redact for `credentials`: `text` with every echoed form replaced by [REDACTED], cut to `max`
 * characters. One pass from the start that stops at `max` characters out: a form starting before
 * the cut is wholly redacted, and a long text costs no more than its first `max` characters.
 */
export function redactor(credentials: GitCredentials): Redact {
  const forms = echoedForms(credentials);
  const firsts = new Set(forms.map((f) => f[0]));
  return (text, max) => {
    const out: string[] = [];
    let length = 0;
    for (let i = 0; i < text.length && length < max; ) {
      const form = firsts.has(text[i]) ? forms.find((f) => text.startsWith(f, i)) : undefined;
      const piece = form === undefined ? (text[i] as string) : '[REDACTED]';
      i += form === undefined ? 1 : form.length;
      // A base64 form's padding goes with it.
      if (form !== undefined) for (let pad = 0; pad < 2 && text[i] === '='; pad++) i++;
      out.push(piece);
      length += piece.length;
    }
    return out.join('').slice(0, max);
  };
}
