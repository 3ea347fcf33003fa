// SSH repository URLs as Git writes them: `ssh://[user@]host[:port]/path` and the scp-like
// `user@host:path`, which is shown and compared as `ssh://user@host/path` (GitHub, GitLab, Gitea
// and Bitbucket serve a repository at the same path either way). The user defaults to `git`.
import { SCP_LIKE_PATTERN } from '../crd/git-write-back.ts';

export interface SshRemote {
  user: string;
  host: string;
  port: number;
  /** As sent to git-upload-pack / git-receive-pack: starts with '/'. */
  path: string;
}

// The scp-like form: a user, a host without ':' or '/', then the path after one ':'.
const SCP_LIKE = new RegExp(SCP_LIKE_PATTERN);
const DEFAULT_USER = 'git';

/** Whether `url` names a repository over SSH (either form), valid or not. */
export function isSshUrl(url: string): boolean {
  return /^ssh:\/\//i.test(url) || SCP_LIKE.test(url);
}

/** `url` as its ssh:// form (an scp-like URL rewritten); other URLs unchanged. */
export function sshUrlForm(url: string): string {
  if (!SCP_LIKE.test(url)) return url;
  const at = url.indexOf('@');
  const colon = url.indexOf(':', at);
  const path = url.slice(colon + 1);
  return `ssh://${url.slice(0, colon)}${path.startsWith('/') ? '' : '/'}${path}`;
}

/** The parts of an SSH URL, or undefined when it is none (or carries a password, query or fragment). */
export function parseSshUrl(url: string): SshRemote | undefined {
  const form = sshUrlForm(url);
  if (!/^ssh:\/\//i.test(form) || /[?#]/.test(form) || !URL.canParse(form)) return undefined;
  const u = new URL(form);
  if (u.password || !u.hostname || u.pathname === '' || u.pathname === '/') return undefined;
  return {
    user: u.username ? decodeURIComponent(u.username) : DEFAULT_USER,
    host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: u.port ? Number(u.port) : 22,
    path: decodeURIComponent(u.pathname),
  };
}

/** How a remote is shown and compared: `ssh://user@host[:port]/path`, the port only when not 22. */
export function describeSshRemote(r: SshRemote): string {
  const host = r.host.includes(':') ? `[${r.host}]` : r.host;
  return `ssh://${r.user}@${host}${r.port === 22 ? '' : `:${r.port}`}${r.path.replace(/\/+$/, '')}`;
}

/** An SSH URL in the form it is compared in (see describeSshRemote), or undefined. */
export function normalizeSshUrl(url: string): string | undefined {
  const remote = parseSshUrl(url);
  return remote && describeSshRemote(remote);
}
