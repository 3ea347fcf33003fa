// spec.gitWriteBack on a real API server: what `kubectl apply` accepts and fills in, and each CEL
// rule refusing with the message zod gives (test/unit/crd/git-write-back.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createNamespace, installCrds, kubectl, kubectlOk } from '../support/cluster/kube.ts';

let ns: string;
beforeAll(async () => {
  await installCrds();
  ns = await createNamespace('git-crd');
});
afterAll(async () => {
  await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

type Obj = Record<string, unknown>;
const REPO = { url: 'https://git.example.com/acme/gitops.git', path: 'clusters/prod/docs-values.yaml' };

const release = (name: string, gitWriteBack: Obj): Obj => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'StaticExportRelease',
  metadata: { name, namespace: ns },
  spec: {
    domain: 'docs.example.com',
    credentialsSecretRef: { name: 'admin-key' },
    target: { valuesSecret: { name: 'site-values' } },
    gitWriteBack,
  },
});
const apply = (obj: Obj) => kubectl(['apply', '-f', '-'], stringify(obj));

describe('spec.gitWriteBack on the API server', () => {
  it('accepts a repository and fills in the field and the author', async () => {
    const r = await apply(release('minimal', REPO));
    expect(r.stderr).toBe('');
    const got = JSON.parse(await kubectlOk(['get', 'ser', 'minimal', '-n', ns, '-o', 'json'])) as {
      spec: { gitWriteBack: Obj };
    };
    expect(got.spec.gitWriteBack).toEqual({
      ...REPO,
      field: 'staticExport.version',
      author: { name: 'static-export-operator', email: 'static-export-operator@noreply.invalid' },
    });
  });

  it('accepts SSH URLs in both forms, and a signing key', async () => {
    for (const [name, url] of [
      ['ssh', 'ssh://git@git.internal:2222/srv/git/gitops.git'],
      ['scp', 'git@github.com:acme/gitops.git'],
    ]) {
      const r = await apply(
        release(`${name}-url`, {
          ...REPO,
          url,
          secretRef: { name: 'ssh' },
          signingKey: { secretRef: { name: 'sign' } },
        }),
      );
      expect(r.stderr, url).toBe('');
    }
  });

  it('accepts every optional field, placeholders with and without spaces', async () => {
    const r = await apply(
      release('full', {
        url: 'http://git.internal:3000/acme/gitops',
        branch: 'main',
        pushBranch: 'docs/publish-staging',
        path: 'apps/docs/.argocd-source-docs.yaml',
        field: 'staticExport.version',
        secretRef: { name: 'gitops-token' },
        author: { name: 'Docs Bot', email: 'docs-bot@example.com' },
        messageTemplate: 'docs({{.Release}}): {{.Site}} {{ .OldVersion }} -> {{.NewVersion}}\n\nbody',
      }),
    );
    expect(r.stderr).toBe('');
  });

  const refused: [string, Obj, RegExp][] = [
    [
      'a git:// URL',
      { url: 'git://github.com/acme/gitops.git' },
      /spec\.gitWriteBack\.url must be the repository's https:\/\/ URL .* or its SSH URL such as ssh:\/\/git@github\.com\/acme\/gitops\.git or git@github\.com:acme\/gitops\.git/,
    ],
    [
      'a password in an ssh URL',
      { url: 'ssh://git:s3cr3t@github.com/acme/gitops.git' },
      /spec\.gitWriteBack\.url must not hold a password \(ssh:\/\/user:password@\)/,
    ],
    [
      'credentials in the URL',
      { url: 'https://bot:s3cr3t-t0ken@github.com/acme/gitops.git' },
      /spec\.gitWriteBack\.url must not hold credentials \(user:token@\): credentials go in the Secret named by spec\.gitWriteBack\.secretRef/,
    ],
    [
      'a query in the URL',
      { url: 'https://github.com/acme/gitops.git?private_token=x' },
      /spec\.gitWriteBack\.url must not have a query or fragment/,
    ],
    [
      'a path leaving the repository',
      { path: 'clusters/../../etc/values.yaml' },
      /spec\.gitWriteBack\.path must be a YAML file relative to the repository root/,
    ],
    ['an absolute path', { path: '/values.yaml' }, /spec\.gitWriteBack\.path must be a YAML file relative/],
    ['a branch with ..', { branch: 'env/../main' }, /spec\.gitWriteBack\.branch must be a branch name/],
    [
      'a pushBranch equal to the branch',
      { branch: 'main', pushBranch: 'main' },
      /spec\.gitWriteBack\.pushBranch must differ from spec\.gitWriteBack\.branch: leave it out/,
    ],
    [
      'a field with an empty segment',
      { field: 'a..b' },
      /spec\.gitWriteBack\.field must be a dotted YAML path/,
    ],
    [
      'an author name with angle brackets',
      { author: { name: 'Bot <b@x>' } },
      /spec\.gitWriteBack\.author\.name must not contain '<', '>', a line break or another control character/,
    ],
    [
      'an author e-mail that is not one',
      { author: { email: 'nobody' } },
      /spec\.gitWriteBack\.author\.email must be an e-mail address/,
    ],
    [
      'an unknown placeholder',
      { messageTemplate: 'Publish {{.Link}}' },
      /spec\.gitWriteBack\.messageTemplate may only use the placeholders \.Site, \.OldVersion, \.NewVersion and \.Release/,
    ],
    ['a missing path', { path: undefined }, /spec\.gitWriteBack\.path: Required value/],
    // What git itself refuses (issue 39): git fsck --strict, check-ref-format, verify_path.
    [
      'NUL in the author name',
      { author: { name: 'Docs\u0000Bot' } },
      /spec\.gitWriteBack\.author\.name must not contain '<', '>', a line break or another control character/,
    ],
    [
      'NUL in the author e-mail',
      { author: { email: 'bot\u0000@example.com' } },
      /spec\.gitWriteBack\.author\.email must be an e-mail address/,
    ],
    [
      'NUL in the message template',
      { messageTemplate: 'Publish\u0000{{.NewVersion}}' },
      /spec\.gitWriteBack\.messageTemplate must not contain control characters other than line breaks and tabs/,
    ],
    ...(['HEAD', 'refs/heads/main', 'x.lock/y', 'main.'] as const).map((branch): [string, Obj, RegExp] => [
      `the branch ${branch}`,
      { branch },
      /spec\.gitWriteBack\.branch must be a branch name such as main .*as git check-ref-format takes it/,
    ]),
    ...(
      [
        'a/\u0000/values.yaml',
        '.GIT/values.yaml',
        '.git./values.yaml',
        'GIT~1/values.yaml',
        '.g\u200cit/values.yaml',
      ] as const
    ).map((path): [string, Obj, RegExp] => [
      `the path ${JSON.stringify(path)}`,
      { path },
      /spec\.gitWriteBack\.path must be a YAML file relative to the repository root.*in any spelling/,
    ]),
    [
      'credentials after backslashes',
      { url: 'https:\\\\bot:t0ken@github.com/acme/gitops.git' },
      /spec\.gitWriteBack\.url must not contain spaces, control characters or backslashes/,
    ],
    [
      'a tab in the scheme',
      { url: 'ht\ttps://bot:t0ken@github.com/acme/gitops.git' },
      /spec\.gitWriteBack\.url must not contain spaces, control characters or backslashes/,
    ],
  ];
  it.each(refused)(
    'refuses %s with the message naming the field and the fix',
    async (_what, change, message) => {
      const gitWriteBack: Obj = { ...REPO, ...change };
      for (const [k, v] of Object.entries(gitWriteBack)) if (v === undefined) delete gitWriteBack[k];
      const r = await apply(release('bad', gitWriteBack));
      expect(r.code).not.toBe(0);
      // The API server quotes the refused value back to whoever applied it; nothing is stored.
      expect(r.stderr).toMatch(message);
    },
  );

  it('takes status.current.gitCommit through the status subresource', async () => {
    await kubectlOk(['apply', '-f', '-'], stringify(release('status', REPO)));
    const commit = 'a'.repeat(40);
    await kubectlOk([
      'patch',
      'ser',
      'status',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { current: { version: `sha256-${'0'.repeat(64)}`, gitCommit: commit } } }),
    ]);
    const got = JSON.parse(await kubectlOk(['get', 'ser', 'status', '-n', ns, '-o', 'json'])) as {
      status: { current: { gitCommit?: string } };
    };
    expect(got.status.current.gitCommit).toBe(commit);
  });
});
