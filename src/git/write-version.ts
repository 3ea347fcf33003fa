// Commits a published version to the GitOps repository: a shallow fetch of one branch into a
// fresh temporary directory, the one file edited, one commit, a push; on a push rejected because
// the branch moved, the new head is fetched and the edit re-applied, with backoff, never forced.
// Nothing is kept between calls, so there is no Git traffic unless a version is written.
import type * as nodeFs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git, { Errors, type HttpClient, type TreeEntry } from 'isomorphic-git';
import { isRepositoryPath } from '../crd/git-write-back.ts';
import { describeUrl, registerSecret, scrub } from '../redact.ts';
import { wait } from '../timers.ts';
import { isArgoCdOverrideFile, setOverrideParameter } from './argocd-override.ts';
import { type Redact, redactor } from './echoed-credentials.ts';
import { classify, isNonFastForward, MAX_SERVER_LINE } from './failures.ts';
import { decodeFile, encodeFile } from './file-bytes.ts';
import { GIT_HTTP_LIMITS, type GitHttpLimits, gitHttpClient } from './http-transport.ts';
import { PACK_LIMITS, type PackLimits, packCheckingFs } from './pack-bounds.ts';
import { withRepositoryLock } from './repository-lock.ts';
import { sshCommitSigner } from './signing.ts';
import { gitSshClient } from './ssh-transport.ts';
import { describeSshRemote, isSshUrl, normalizeSshUrl, parseSshUrl } from './ssh-url.ts';
import { GitFailure, type WriteVersionOutcome, type WriteVersionRequest } from './types.ts';
import { setYamlField } from './yaml-edit.ts';

/** The default deadline of one call, from the moment the repository's lock is held. */
export const GIT_TIMEOUT_MS = 60_000;
/** Pushes re-applied after a non-fast-forward rejection, waiting 200 ms, 400 ms, 800 ms, 1.6 s (jittered). */
const RETRIES = 4;
const FIRST_BACKOFF_MS = 200;
const LOCAL_REF = 'refs/heads/write-back';
/**
 * Write-backs run one at a time in the process, whatever the repository: each holds a branch tip
 * in memory (bounded by pack-bounds.ts: about 200 MiB at the bounds, docs/benchmarks), and several
 * at once would multiply that in the one process every site shares. One at a time per repository
 * also keeps releases writing to one repository from turning each other's pushes into retries.
 */
const ONE_AT_A_TIME = 'write-back';
/** Server progress lines kept of a push: a hook's reason and git's own come first. */
const MAX_REMOTE_LINES = 100;

/**
 * Writes `req.version` into the target file and pushes one commit, or reports AlreadyWritten
 * when the branch's file holds it. Calls run one after the other (ONE_AT_A_TIME). An aborted
 * `req.signal` rejects with its reason; every other failure is a Failed outcome.
 */
export async function writeVersion(
  req: WriteVersionRequest,
  limits: GitHttpLimits = GIT_HTTP_LIMITS,
  packLimits: PackLimits = PACK_LIMITS,
): Promise<WriteVersionOutcome> {
  const c = req.credentials;
  if (c.kind === 'basic') {
    registerSecret(c.password);
    registerSecret(basicAuth(c));
  }
  if (c.kind === 'ssh') for (const secret of [c.identity, c.passphrase]) registerSecret(secret);
  for (const secret of [req.signingKey?.identity, req.signingKey?.passphrase]) registerSecret(secret);
  const redact = redactor(req.credentials);
  try {
    const remote = checkedRemote(req, limits);
    checkPath(req.target.path);
    return await withRepositoryLock(ONE_AT_A_TIME, req.signal, () =>
      writeLocked(req, remote, packLimits, redact),
    );
  } catch (error) {
    if (req.signal?.aborted) throw req.signal.reason;
    const repository = isSshUrl(req.target.url)
      ? (normalizeSshUrl(req.target.url) ?? '[invalid URL]')
      : describeUrl(req.target.url);
    const failure = error instanceof GitFailure ? error : classify(error, repository, [], redact);
    // Server text was redacted before it was cut; the whole message once more, as everywhere.
    const message = scrub(redact(failure.message, Number.POSITIVE_INFINITY));
    return { outcome: 'Failed', reason: failure.reason, message };
  }
}

function basicAuth(credentials: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

/** A repository as the engine reaches it, over HTTPS or SSH. */
interface Remote {
  /** As messages name it: origin and path, or ssh://user@host[:port]/path. */
  repository: string;
  /** The URL isomorphic-git is given; over SSH a stand-in whose path names the service. */
  url: string;
  /** The transport of one call: `signal` aborts its requests, `refuse` hears of a response over its bound. */
  transport(signal: AbortSignal, refuse: (failure: GitFailure) => void): HttpClient & { close(): void };
}

/** The stand-in URL isomorphic-git is given for an SSH remote: the SSH transport reads its path only. */
const SSH_BRIDGE_URL = 'https://ssh.invalid/repository';

function checkedRemote(req: WriteVersionRequest, limits: GitHttpLimits): Remote {
  const c = req.credentials;
  if (isSshUrl(req.target.url)) {
    const remote = parseSshUrl(req.target.url);
    if (!remote)
      throw new GitFailure(
        'GitUnsupported',
        'url is not an SSH URL Git reads: use ssh://git@host[:port]/owner/repository.git or git@host:owner/repository.git, without a password',
      );
    if (c.kind !== 'ssh')
      throw new GitFailure(
        'GitUnsupported',
        `${describeSshRemote(remote)} is an SSH URL: it needs the keys identity (a private key the repository accepts as a deploy key) and known_hosts in the Secret named by spec.gitWriteBack.secretRef, as Flux's SSH Secrets have them; or use the repository's https:// URL`,
      );
    return {
      repository: describeSshRemote(remote),
      url: SSH_BRIDGE_URL,
      transport: (signal, refuse) => gitSshClient(remote, c, limits, signal, refuse),
    };
  }
  if (c.kind === 'ssh')
    throw new GitFailure(
      'GitUnsupported',
      `the Secret named by spec.gitWriteBack.secretRef holds an SSH key (identity), but url is ${describeUrl(req.target.url)}: use the repository's ssh:// (or git@host:path) URL, or put username and password in the Secret`,
    );
  const url = checkedUrl(req);
  const authorization = c.kind === 'basic' ? basicAuth(c) : undefined;
  return {
    repository: describeUrl(url.href),
    url: url.href,
    transport: (signal, refuse) => gitHttpClient(url.origin, authorization, limits, signal, refuse, c.caCert),
  };
}

function checkedUrl(req: WriteVersionRequest): URL {
  const raw = req.target.url;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GitFailure('GitUnsupported', 'url is not a URL: use https://host/owner/repository.git');
  }
  if (url.username || url.password) {
    throw new GitFailure(
      'GitUnsupported',
      'url carries credentials: remove them from it and put them in the Secret',
    );
  }
  if (url.protocol === 'http:' && !req.allowInsecureHttp) {
    throw new GitFailure(
      'GitUnsupported',
      `plain http (${describeUrl(raw)}) needs the operator's --allow-insecure-git-url; use https://`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GitFailure(
      'GitUnsupported',
      `${url.protocol} URLs are not supported: use https://host/owner/repository.git`,
    );
  }
  url.hash = '';
  url.search = '';
  return url;
}

function checkPath(path: string): void {
  if (!isRepositoryPath(path)) {
    throw new GitFailure(
      'GitPathMissing',
      `path ${JSON.stringify(path.slice(0, 200))} must be a relative file path inside the repository, without "..", like deploy/values.yaml`,
    );
  }
}

interface Head {
  commit: string;
  /** The branch pushed to. */
  branch: string;
}

async function writeLocked(
  req: WriteVersionRequest,
  remote: Remote,
  packLimits: PackLimits,
  redact: Redact,
): Promise<WriteVersionOutcome> {
  const timeoutMs = req.timeoutMs ?? GIT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  // A response over its bound ends the call with that failure.
  const refused = new AbortController();
  const signal = AbortSignal.any([...(req.signal ? [req.signal] : []), deadline, refused.signal]);
  const { repository } = remote;
  const http = remote.transport(signal, (failure) => refused.abort(failure));
  const gitdir = await mkdtemp(join(tmpdir(), 'git-write-back-'));
  const fs = packCheckingFs(packLimits, repository);
  const cache = {};
  const context = { fs, http, gitdir, cache, remote: 'origin', signal };
  try {
    await git.init({ fs, gitdir, bare: true });
    // A remote's fetch refspec is what isomorphic-git's fetch maps the fetched ref through.
    await git.addRemote({ fs, gitdir, remote: 'origin', url: remote.url });
    const onSign = req.signingKey ? await sshCommitSigner(req.signingKey) : undefined;
    for (let attempt = 1; ; attempt++) {
      const head = await fetchHead(context, req, repository);
      signal.throwIfAborted();
      const tree = await editedTree(context, req, head, repository);
      if (tree === undefined) return { outcome: 'AlreadyWritten', commit: head.commit, branch: head.branch };
      const author = { ...req.author, timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 };
      const commit = await git.commit({
        fs,
        gitdir,
        cache,
        message: req.message,
        author,
        committer: author,
        tree,
        parent: [head.commit],
        ref: LOCAL_REF,
        // isomorphic-git calls onSign only when given a signingKey: the key itself stays with the signer.
        ...(onSign ? { onSign, signingKey: 'ssh' } : {}),
      });
      signal.throwIfAborted();
      const remoteLines: string[] = [];
      try {
        await git.push({
          fs,
          http,
          gitdir,
          cache,
          remote: 'origin',
          ref: LOCAL_REF,
          remoteRef: `refs/heads/${head.branch}`,
          // Bounded and redacted as they arrive: a server's lines are read no further.
          onMessage: (line) => {
            if (remoteLines.length < MAX_REMOTE_LINES) remoteLines.push(redact(line, MAX_SERVER_LINE));
          },
          signal,
        });
        return { outcome: 'Committed', commit, branch: head.branch, attempts: attempt };
      } catch (error) {
        // isomorphic-git hands over the server's progress lines without awaiting them: let the
        // last ones (a hook's reason, the ref's actual value) arrive before reading them.
        await new Promise((resolve) => setImmediate(resolve));
        if (signal.aborted || !isNonFastForward(error, remoteLines))
          throw classify(error, repository, remoteLines, redact);
      }
      if (attempt > RETRIES) {
        throw new GitFailure(
          'GitNonFastForward',
          `${head.branch} of ${repository} kept moving: the push was rejected as non-fast-forward ${attempt} times`,
        );
      }
      const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** (attempt - 1), 1_600) * (0.5 + Math.random() / 2);
      if (!(await wait(backoff, signal))) signal.throwIfAborted();
    }
  } catch (error) {
    if (refused.signal.aborted) throw refused.signal.reason;
    if (deadline.aborted && !req.signal?.aborted) {
      throw new GitFailure(
        'GitUnreachable',
        `writing to ${repository} did not finish within ${timeoutMs} ms`,
      );
    }
    throw error;
  } finally {
    http.close();
    await rm(gitdir, { recursive: true, force: true });
  }
}

type Context = {
  fs: typeof nodeFs;
  http: HttpClient;
  gitdir: string;
  cache: object;
  remote: string;
  signal: AbortSignal;
};

/** The head to write on: pushBranch's when it exists, else branch's (the remote's default when unset). */
async function fetchHead(context: Context, req: WriteVersionRequest, repository: string): Promise<Head> {
  const { branch, pushBranch } = req.target;
  if (pushBranch) {
    const existing = await fetchBranch(context, `refs/heads/${pushBranch}`);
    if (existing) return { commit: existing.commit, branch: pushBranch };
  }
  const base = await fetchBranch(context, branch ? `refs/heads/${branch}` : 'HEAD');
  if (!base) {
    throw new GitFailure(
      'GitBranchMissing',
      branch
        ? `branch ${branch} is not in ${repository}`
        : `${repository} has no default branch (an empty repository?): set branch`,
    );
  }
  const name = branch ?? base.defaultBranch?.replace(/^refs\/heads\//, '');
  if (!name)
    throw new GitFailure('GitBranchMissing', `${repository} did not name its default branch: set branch`);
  return { commit: base.commit, branch: pushBranch ?? name };
}

/** A depth-1 fetch of one ref; undefined when the remote does not have it. */
async function fetchBranch(
  context: Context,
  remoteRef: string,
): Promise<{ commit: string; defaultBranch: string | null } | undefined> {
  const { signal, ...options } = context;
  let result: Awaited<ReturnType<typeof git.fetch>>;
  try {
    result = await git.fetch({
      ...options,
      ref: 'fetched',
      remoteRef,
      singleBranch: true,
      depth: 1,
      tags: false,
    });
  } catch (error) {
    signal.throwIfAborted();
    if (error instanceof Errors.NotFoundError) return undefined;
    throw error;
  }
  // A refused advertisement reads as a short one: no answer drawn from it.
  signal.throwIfAborted();
  if (!result.fetchHead) return undefined;
  return { commit: result.fetchHead, defaultBranch: result.defaultBranch };
}

/** The commit's tree with the file edited, or undefined when the file already holds the version. */
async function editedTree(
  context: Context,
  req: WriteVersionRequest,
  head: Head,
  repository: string,
): Promise<string | undefined> {
  const { path, field } = req.target;
  const { fs, gitdir, cache } = context;
  let current: string | undefined;
  try {
    const { blob } = await git.readBlob({ fs, gitdir, cache, oid: head.commit, filepath: path });
    current = decodeFile(blob);
  } catch (error) {
    if (!(error instanceof Errors.NotFoundError) && !(error instanceof Errors.ObjectTypeError)) throw error;
  }
  const override = isArgoCdOverrideFile(path);
  if (current === undefined && !override) {
    throw new GitFailure('GitPathMissing', `${path} is not in branch ${head.branch} of ${repository}`);
  }
  const next = override
    ? setOverrideParameter(current, path, field, req.version)
    : setYamlField(current as string, path, field, req.version);
  if (next === undefined) return undefined;
  const blob = await git.writeBlob({ fs, gitdir, blob: encodeFile(next) });
  const { commit } = await git.readCommit({ fs, gitdir, cache, oid: head.commit });
  return replaceInTree(context, commit.tree, path.split('/'), blob, path);
}

/** `tree` with the blob at `segments` replaced (or added, with any missing directories); its new id. */
async function replaceInTree(
  context: Context,
  tree: string | undefined,
  segments: string[],
  blob: string,
  path: string,
): Promise<string> {
  const { fs, gitdir, cache } = context;
  const entries: TreeEntry[] = tree ? (await git.readTree({ fs, gitdir, cache, oid: tree })).tree : [];
  const [name, ...rest] = segments as [string, ...string[]];
  const index = entries.findIndex((e) => e.path === name);
  const existing = index === -1 ? undefined : entries[index];
  let entry: TreeEntry;
  if (rest.length === 0) {
    if (existing && existing.type !== 'blob')
      throw new GitFailure('GitPathMissing', `${path} is a directory, not a file`);
    entry = { mode: existing?.mode === '100755' ? '100755' : '100644', path: name, oid: blob, type: 'blob' };
  } else {
    if (existing && existing.type !== 'tree')
      throw new GitFailure('GitPathMissing', `${path} crosses the file ${name}`);
    entry = {
      mode: '040000',
      path: name,
      oid: await replaceInTree(context, existing?.oid, rest, blob, path),
      type: 'tree',
    };
  }
  if (index === -1) entries.push(entry);
  else entries[index] = entry;
  return git.writeTree({ fs, gitdir, tree: entries });
}
