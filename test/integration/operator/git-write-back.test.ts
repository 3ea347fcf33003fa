// spec.gitWriteBack end to end: the real control plane, the operator in this process, the
// simulator, and real Git servers on loopback (git http-backend behind basic auth; sshd through
// git-shell with a deploy key). Each published
// version lands in Git as one commit changing only the field; a restart or identical content adds
// none; a refused push, a wrong token or a repository the operator was not given leave the site
// serving and Ready True, their reason in the GitWriteBack condition. No token and no link ever
// reach Git, status, events or logs.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import {
  eventsFor,
  eventually,
  KUBECTL,
  kubeconfig,
  kubectl,
  kubectlOk,
} from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import {
  applyRelease,
  applySecret,
  getRelease,
  requestExport,
  untilRelease,
} from '../../support/cluster/resources.ts';
import { GitServer, runGit } from '../../support/servers/git-server.ts';
import { SshGitServer, sshKeygen } from '../../support/servers/ssh-git-server.ts';
import { tempDir } from '../../support/temp.ts';
import { argoHealth, kstatus } from '../../support/tools/status-tools.ts';

const TOKEN = 'glpat-write-back-token-7f3a9c';
const server = new GitServer(tempDir('git-server-'), { username: 'docs-bot', password: TOKEN });
// The same over SSH: Debian's sshd through git-shell, a deploy key, its host key in known_hosts.
const sshd = new SshGitServer();
const deployKey = sshKeygen(sshd.dir, 'deploy');
sshd.authorize(deployKey.public);
const VALUES = `# The docs site (self-hosted)
staticExport:
  enabled: true
  # Written by the operator: the version it publishes
  version: "none yet"   # keep this comment
replicaCount: 2
`;

const h = useOperatorSuite({
  namespaces: ['git-write-back'],
  sim: { exportDurationMs: 300 },
  editableDocs: true,
  beforeStart: async () => {
    await server.start();
    for (const name of ['site', 'guarded', 'wrong-token', 'argo', 'doomed'])
      server.createRepo(name, { 'deploy/values.yaml': VALUES, 'README.md': '# GitOps\n' });
    server.protect('guarded', 'main', 'GH006: Protected branch update failed for refs/heads/main.');
    await sshd.start();
    sshd.repos.createRepo('over-ssh', { 'deploy/values.yaml': VALUES });
  },
  // Plain http on loopback: the test's Git server has no certificate.
  operator: () => ({
    gitUrls: {
      allowed: [
        ...['site', 'guarded', 'wrong-token', 'argo', 'doomed'].map((n) => server.url(n)),
        sshd.url('over-ssh'),
      ],
      allowInsecure: true,
    },
  }),
});
afterAll(async () => {
  await server.stop();
  await sshd.stop();
});

const git = (repo: string, ...args: string[]) => runGit(args, { cwd: server.gitDir(repo) });
const head = (repo: string) => git(repo, 'rev-parse', 'refs/heads/main').trim();
const commits = (repo: string) => Number(git(repo, 'rev-list', '--count', 'refs/heads/main').trim());
const fileAt = (repo: string, path: string) => git(repo, 'show', `refs/heads/main:${path}`);

const writeBackTo = (repo: string, extra: Record<string, unknown> = {}) => ({
  gitWriteBack: {
    url: server.url(repo),
    path: 'deploy/values.yaml',
    secretRef: { name: 'git-token' },
    author: { name: 'Docs Bot', email: 'docs-bot@example.com' },
    ...extra,
  },
});

const condition = (r: StaticExportRelease, type: string) =>
  r.status?.conditions?.find((c) => c.type === type);

const waitFor = (name: string, what: string, test: (r: StaticExportRelease) => boolean, ms?: number) =>
  untilRelease(h.ns, name, what, test, ms);

/** Asks for an export and waits until it finished (identical content: nothing new is served). */
async function reexport(value: string): Promise<StaticExportRelease> {
  const job = (await getRelease(h.ns, 'site')).status?.export?.jobId;
  await requestExport(h.ns, 'site', value);
  return waitFor(
    'site',
    `exported for ${value}`,
    (r) =>
      r.status?.lastHandledRequestedAt === value &&
      r.status.export?.jobId !== job &&
      !!r.status.export?.finishedAt,
  );
}

/** The values the site chart reads, from the operator's values Secret. */
async function servedValues(name: string): Promise<string> {
  const data = await kubectlOk([
    'get',
    'secret',
    `${name}-values`,
    '-n',
    h.ns,
    '-o',
    'jsonpath={.data.values\\.yaml}',
  ]);
  return Buffer.from(data, 'base64').toString();
}

describe('Git write-back', () => {
  it('commits the published version: one commit, only the field changed, the commit in status and a Committed event', async () => {
    await applySecret(h.ns, 'git-token', { username: 'docs-bot', password: TOKEN });
    const before = head('site');
    await applyRelease(h.ns, 'site', writeBackTo('site'));
    const r = await waitFor('site', 'committed', (x) => !!x.status?.current?.gitCommit);
    const version = r.status?.current?.version ?? '';
    expect(version).toMatch(/^sha256-/);
    expect(r.status?.current?.gitCommit).toBe(head('site'));
    expect(git('site', 'rev-parse', 'main~1').trim()).toBe(before);
    expect(git('site', 'diff', '--name-only', before, 'main')).toBe('deploy/values.yaml\n');
    // Byte for byte the file it was, but the version (its comments and layout kept).
    expect(fileAt('site', 'deploy/values.yaml')).toBe(VALUES.replace('"none yet"', `"${version}"`));
    expect(git('site', 'log', '-1', '--format=%an <%ae>%n%B', 'main')).toContain(
      'Docs Bot <docs-bot@example.com>',
    );
    expect(git('site', 'log', '-1', '--format=%B', 'main')).toContain(version);
    const events = await eventsFor(h.ns, 'site');
    expect(events.map((e) => e.reason)).toContain('Committed');
    expect(events.find((e) => e.reason === 'Committed')?.note).toContain(r.status?.current?.gitCommit);
    expect(condition(r, 'Ready')?.reason).toBe('Published');
    expect(condition(r, 'GitWriteBack')).toMatchObject({ status: 'True', reason: 'Committed' });
    // The link went to the values Secret only: never into Git.
    expect(await servedValues('site')).toContain('bundleUrl');
    const history = git('site', 'log', '-p', '--all');
    expect(history).not.toContain('bundleUrl');
    expect(history).not.toContain(h.sim.baseUrl);
  });

  it('identical content exported again and a restarted operator add no commit, and no Git traffic at all', async () => {
    const count = commits('site');
    const traffic = server.seen.length;
    await reexport('same-content');
    await h.restartOperator();
    await reexport('after-restart');
    expect(commits('site')).toBe(count);
    expect(server.seen.length).toBe(traffic);
    expect((await getRelease(h.ns, 'site')).status?.current?.gitCommit).toBe(head('site'));
  });

  it('a new version is committed on top, its message naming the old and the new version', async () => {
    const old = (await getRelease(h.ns, 'site')).status?.current?.version ?? '';
    const count = commits('site');
    writeFileSync(join(h.docsDir, 'git-news.md'), '# News\n\nA page that was not there before.\n');
    await requestExport(h.ns, 'site', 'new-content');
    const r = await waitFor(
      'site',
      'the new version committed',
      (x) => !!x.status?.current?.version && x.status.current.version !== old && !!x.status.current.gitCommit,
    );
    const version = r.status?.current?.version ?? '';
    expect(commits('site')).toBe(count + 1);
    expect(r.status?.current?.gitCommit).toBe(head('site'));
    const message = git('site', 'log', '-1', '--format=%B', 'main');
    expect(message).toContain(version);
    expect(message).toContain(old);
    expect(fileAt('site', 'deploy/values.yaml')).toBe(VALUES.replace('"none yet"', `"${version}"`));
  });

  it("a protected branch refuses: GitWriteBack False (GitBranchProtected, the server's words) while Ready stays True, nothing Stalled, and the site keeps serving the version", async () => {
    const count = commits('guarded');
    await applyRelease(h.ns, 'guarded', writeBackTo('guarded'));
    const r = await waitFor(
      'guarded',
      'refused',
      (x) => condition(x, 'GitWriteBack')?.reason === 'GitBranchProtected',
    );
    const version = r.status?.current?.version ?? '';
    expect(condition(r, 'GitWriteBack')?.status).toBe('False');
    expect(condition(r, 'GitWriteBack')?.message).toContain('Protected branch update failed');
    expect(condition(r, 'GitWriteBack')?.message).toContain(`The site keeps serving it`);
    expect(condition(r, 'Ready')).toMatchObject({ status: 'True', reason: 'Published' });
    expect(condition(r, 'Stalled')).toBeUndefined();
    // What Flux and Argo CD make of it: the site is served, so Current and Healthy.
    expect((await kstatus([r]))[0]?.status).toBe('Current');
    expect((await argoHealth(r)).status).toBe('Healthy');
    expect(r.status?.current?.gitCommit).toBeUndefined();
    expect(await servedValues('guarded')).toContain(version);
    expect(commits('guarded')).toBe(count);
    const warnings = (await eventsFor(h.ns, 'guarded')).filter((e) => e.reason === 'GitBranchProtected');
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('a wrong token: GitAuthRefused, and the token is nowhere in status, events or the logs', async () => {
    await applySecret(h.ns, 'wrong-git-token', { username: 'docs-bot', password: 'not-the-token-at-all' });
    await applyRelease(
      h.ns,
      'wrong-token',
      writeBackTo('wrong-token', { secretRef: { name: 'wrong-git-token' } }),
    );
    const r = await waitFor(
      'wrong-token',
      'refused',
      (x) => condition(x, 'GitWriteBack')?.reason === 'GitAuthRefused',
    );
    expect(condition(r, 'Ready')?.status).toBe('True');
    const seen = JSON.stringify([
      r.status,
      await eventsFor(h.ns, 'wrong-token'),
      await eventsFor(h.ns, 'site'),
      h.logs,
    ]);
    expect(seen).not.toContain('not-the-token-at-all');
    expect(seen).not.toContain(TOKEN);
    expect(commits('wrong-token')).toBe(1);
  });

  it('a repository the operator was not given: GitUrlRefused before its Secret is read', async () => {
    // The Secret does not exist: a refused URL is told, not the missing Secret.
    await applyRelease(h.ns, 'elsewhere', {
      gitWriteBack: { url: server.url('not-listed'), path: 'values.yaml', secretRef: { name: 'absent' } },
    });
    const r = await waitFor(
      'elsewhere',
      'refused',
      (x) => condition(x, 'GitWriteBack')?.reason === 'GitUrlRefused',
    );
    expect(condition(r, 'GitWriteBack')?.message).toContain('--allowed-git-urls');
    expect(condition(r, 'Ready')?.status).toBe('True');
    expect(server.seen.some((s) => s.url.includes('not-listed'))).toBe(false);
  });

  it('over SSH with a Flux SSH Secret as it is (identity, identity.pub, known_hosts): committed, GitWriteBack True, the key nowhere', async () => {
    await applySecret(h.ns, 'flux-ssh', {
      identity: deployKey.private,
      'identity.pub': deployKey.public,
      known_hosts: sshd.knownHosts(),
    });
    await applyRelease(h.ns, 'over-ssh', {
      gitWriteBack: {
        url: sshd.url('over-ssh'),
        path: 'deploy/values.yaml',
        secretRef: { name: 'flux-ssh' },
      },
    });
    const r = await waitFor('over-ssh', 'committed', (x) => !!x.status?.current?.gitCommit);
    const repo = sshd.repos.gitDir('over-ssh');
    expect(r.status?.current?.gitCommit).toBe(runGit(['rev-parse', 'refs/heads/main'], { cwd: repo }).trim());
    expect(runGit(['show', 'main:deploy/values.yaml'], { cwd: repo })).toContain(
      r.status?.current?.version ?? '-',
    );
    expect(condition(r, 'GitWriteBack')).toMatchObject({ status: 'True', reason: 'Committed' });
    expect(r.status?.current?.gitTarget).toContain(`ssh://root@127.0.0.1:${sshd.port}/`);
    const seen = JSON.stringify([r.status, await eventsFor(h.ns, 'over-ssh'), h.logs]);
    expect(seen).not.toContain(deployKey.private.split('\n')[1]);
  });

  it("Argo CD's override file is created beside the Application's source, with the version as a string parameter", async () => {
    await applyRelease(h.ns, 'argo', writeBackTo('argo', { path: 'deploy/.argocd-source-docs.yaml' }));
    const r = await waitFor('argo', 'committed', (x) => !!x.status?.current?.gitCommit);
    const override = fileAt('argo', 'deploy/.argocd-source-docs.yaml');
    expect(override).toContain('name: staticExport.version');
    expect(override).toContain(r.status?.current?.version ?? 'missing');
    expect(override).toContain('forceString: true');
    // The values file is left as it was.
    expect(fileAt('argo', 'deploy/values.yaml')).toBe(VALUES);
  });

  it('a release deleted while its push is on the wire goes away cleanly: Git holds the whole commit or none of it', async () => {
    const before = head('doomed');
    // Deleted as the server is about to take our push: the reconcile is aborted mid-call.
    server.raceAt = 'push';
    server.beforeReceivePack = () =>
      execFileSync(KUBECTL, [
        '--kubeconfig',
        kubeconfig(),
        'delete',
        'ser',
        'doomed',
        '-n',
        h.ns,
        '--wait=false',
      ]);
    await applyRelease(h.ns, 'doomed', writeBackTo('doomed'));
    await eventually('the release gone', async () => {
      const got = await kubectl(['get', 'ser', 'doomed', '-n', h.ns]);
      return got.code !== 0 && got.stderr.includes('NotFound') ? true : undefined;
    });
    expect(server.beforeReceivePack).toBeUndefined();
    if (head('doomed') === before) expect(commits('doomed')).toBe(1);
    else {
      expect(git('doomed', 'rev-parse', 'main~1').trim()).toBe(before);
      expect(fileAt('doomed', 'deploy/values.yaml')).toMatch(
        /version: "sha256-[0-9a-f]{64}" {3}# keep this comment/,
      );
    }
    expect(JSON.stringify(h.logs)).not.toContain(TOKEN);
  });
});
