// Which repositories releases may push to (operator flags --allowed-git-urls and
// --allow-insecure-git-url): checked before the Secret with the token is read, so a release naming
// another repository neither gets the token sent there nor learns anything about the Secret.
import {
  type AllowList,
  insecureUrl,
  normalizeHttpUrl,
  type UrlPolicy,
  urlRefusal,
} from '../url-allow-list.ts';
import { isSshUrl, normalizeSshUrl, sshUrlForm } from './ssh-url.ts';

/**
 * A repository URL as it is compared: origin and path, without trailing slashes or `.git`
 * (Git servers serve `/owner/repo` and `/owner/repo.git` as the same repository); an SSH URL as
 * `ssh://user@host[:port]/path` (the scp-like `user@host:path` rewritten so).
 */
export function normalizeGitUrl(url: string): string | undefined {
  return (isSshUrl(url) ? normalizeSshUrl(url) : normalizeHttpUrl(url))?.replace(/\.git$/, '');
}

const GIT_URLS: AllowList = {
  what: 'a Git repository this operator pushes to',
  listFlag: '--allowed-git-urls',
  insecureFlag: '--allow-insecure-git-url',
  normalize: normalizeGitUrl,
  // Loopback included, unlike the admin API: a Git server is never the operator's own sidecar.
  insecure: (u) =>
    u.protocol === 'http:'
      ? 'uses plain http: the token and the commits would cross the network unencrypted'
      : undefined,
};

export type GitUrlCheck = { allowed: true } | { allowed: false; reason: 'GitUrlRefused'; message: string };

/**
 * Whether a release may push to `url` (spec.gitWriteBack.url). An empty list allows none, as
 * for spec.apiBaseUrl: write-back stays off until the operator is given the repositories.
 */
export function gitUrlAllowed(url: string, policy: UrlPolicy): GitUrlCheck {
  // The scp-like form is no URL the allow-list can parse: it is compared as its ssh:// form.
  const message = urlRefusal(sshUrlForm(url), 'spec.gitWriteBack.url', policy, GIT_URLS);
  return message === undefined ? { allowed: true } : { allowed: false, reason: 'GitUrlRefused', message };
}

/** Why an --allowed-git-urls entry needs --allow-insecure-git-url, or undefined. */
export function insecureGitUrl(url: string, allowInsecure: boolean): string | undefined {
  return insecureUrl(url, allowInsecure, GIT_URLS);
}
