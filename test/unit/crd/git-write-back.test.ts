// spec.gitWriteBack as zod reads it (the operator, the CLI): defaults, and every refusal naming the
// field and the fix. test/integration/git-write-back-crd.test.ts applies the same to the API server.
import { describe, expect, it } from 'vitest';
import { DEFAULT_GIT_AUTHOR, staticExportReleaseSpecSchema } from '../../../src/crd/index.ts';

const base = {
  domain: 'docs.example.com',
  credentialsSecretRef: { name: 'key' },
  target: { valuesSecret: { name: 'values' } },
};
const repo = { url: 'https://git.example.com/acme/gitops.git', path: 'clusters/prod/docs-values.yaml' };
const parse = (gitWriteBack: object) => staticExportReleaseSpecSchema.safeParse({ ...base, gitWriteBack });
const messages = (gitWriteBack: object) => {
  const r = parse(gitWriteBack);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
};

describe('spec.gitWriteBack', () => {
  it('takes a repository and a path, and fills in the field and the author', () => {
    const r = parse(repo);
    expect(r.success && r.data.gitWriteBack).toEqual({
      ...repo,
      field: 'staticExport.version',
      author: DEFAULT_GIT_AUTHOR,
    });
  });

  it('authors commits by default at a reserved domain no one can register a login or mailbox at', () => {
    // users.noreply.github.com addresses credit the commits to whoever holds that GitHub login.
    expect(DEFAULT_GIT_AUTHOR.email).toBe('static-export-operator@noreply.invalid');
    expect(DEFAULT_GIT_AUTHOR.email.endsWith('.invalid')).toBe(true);
  });

  it('takes every optional field', () => {
    expect(
      messages({
        ...repo,
        url: 'http://git.internal:3000/acme/gitops',
        branch: 'main',
        pushBranch: 'docs/publish-staging',
        path: 'apps/docs/.argocd-source-docs.yml',
        field: 'site-values.staticExport.version',
        secretRef: { name: 'gitops-token' },
        author: { name: 'Docs Bot', email: 'docs-bot@example.com' },
        messageTemplate: 'docs({{.Release}}): {{.Site}} {{ .OldVersion }} -> {{.NewVersion}}',
      }),
    ).toEqual([]);
  });

  it.each([
    ['a git:// URL', 'git://github.com/acme/gitops.git'],
    ['a relative path', 'acme/gitops'],
    ['an scp-style URL without a user', 'github.com:acme/gitops.git'],
    ['an ssh:// URL without a host', 'ssh:///acme/gitops.git'],
  ])('refuses %s, naming what is supported', (_what, url) => {
    expect(messages({ ...repo, url })).toEqual([
      expect.stringMatching(
        /^url: spec\.gitWriteBack\.url must be the repository's https:\/\/ URL .* or its SSH URL such as ssh:\/\/git@github\.com\/acme\/gitops\.git or git@github\.com:acme\/gitops\.git$/,
      ),
    ]);
  });

  it.each([
    ['an ssh:// URL', 'ssh://git@github.com/acme/gitops.git'],
    ['an ssh:// URL with a port', 'ssh://git@git.internal:2222/srv/git/gitops.git'],
    ['an scp-style URL', 'git@github.com:acme/gitops.git'],
  ])('accepts %s', (_what, url) => {
    expect(messages({ ...repo, url })).toEqual([]);
  });

  it('refuses a password in an ssh:// URL, pointing at the Secret, without repeating it', () => {
    const found = messages({ ...repo, url: 'ssh://git:hunter2@github.com/acme/gitops.git' });
    expect(found).toEqual([
      'url: spec.gitWriteBack.url must not hold a password (ssh://user:password@): the SSH key goes in the Secret named by spec.gitWriteBack.secretRef (keys identity and known_hosts)',
    ]);
  });

  it('refuses credentials in the URL, pointing at secretRef, without repeating them', () => {
    const found = messages({ ...repo, url: 'https://bot:ghp_s3cr3tT0ken@github.com/acme/gitops.git' });
    expect(found).toEqual([
      'url: spec.gitWriteBack.url must not hold credentials (user:token@): credentials go in the Secret named by spec.gitWriteBack.secretRef (keys username and password)',
    ]);
    expect(found.join()).not.toContain('ghp_s3cr3tT0ken');
    expect(messages({ ...repo, url: 'https://x-access-token@github.com/acme/gitops.git' })).toHaveLength(1);
  });

  it('refuses a query or fragment', () => {
    expect(messages({ ...repo, url: 'https://github.com/acme/gitops.git?private_token=x' })).toEqual([
      expect.stringMatching(/^url: spec\.gitWriteBack\.url must not have a query or fragment/),
    ]);
  });

  it.each([
    '/etc/values.yaml',
    '../values.yaml',
    'clusters/../../values.yaml',
    'clusters/./values.yaml',
    '.git/config.yaml',
    'clusters//values.yaml',
    'clusters/prod/',
    'clusters/prod/values.json',
  ])('refuses the path %s, saying what a path must be', (path) => {
    expect(messages({ ...repo, path })).toEqual([
      expect.stringMatching(
        /^path: spec\.gitWriteBack\.path must be a YAML file relative to the repository root, such as .*\(no leading '\/'; no '\.', '\.\.' or \.git segments in any spelling, .*ending in \.yaml or \.yml\)$/,
      ),
    ]);
  });

  it.each([
    ['branch', '-main'],
    ['branch', 'env//prod'],
    ['branch', 'env/../prod'],
    ['branch', 'main.lock'],
    ['pushBranch', 'review branch'],
  ])('refuses the %s %s, naming the field', (field, value) => {
    expect(messages({ ...repo, [field]: value })).toEqual([
      expect.stringMatching(
        new RegExp(`^${field}: spec\\.gitWriteBack\\.${field} must be a branch name such as main`),
      ),
    ]);
  });

  it('refuses a pushBranch that is the branch, saying to leave it out', () => {
    expect(messages({ ...repo, branch: 'main', pushBranch: 'main' })).toEqual([
      'pushBranch: spec.gitWriteBack.pushBranch must differ from spec.gitWriteBack.branch: leave it out to push to spec.gitWriteBack.branch itself',
    ]);
  });

  it('refuses a field that is not a dotted YAML path', () => {
    for (const field of ['.staticExport', 'staticExport..version', 'static export', 'a[0]'])
      expect(messages({ ...repo, field })).toEqual([
        expect.stringMatching(
          /^field: spec\.gitWriteBack\.field must be a dotted YAML path such as staticExport\.version/,
        ),
      ]);
  });

  it('refuses an author the commit could not carry', () => {
    expect(messages({ ...repo, author: { name: 'Bot <bot@x>' } })).toEqual([
      "author.name: spec.gitWriteBack.author.name must not contain '<', '>', a line break or another control character",
    ]);
    expect(messages({ ...repo, author: { email: 'not an address' } })).toEqual([
      expect.stringMatching(/^author\.email: spec\.gitWriteBack\.author\.email must be an e-mail address/),
    ]);
    const r = parse({ ...repo, author: { name: 'Docs Bot' } });
    expect(r.success && r.data.gitWriteBack?.author).toEqual({
      name: 'Docs Bot',
      email: DEFAULT_GIT_AUTHOR.email,
    });
  });

  it('refuses an unknown placeholder, listing the known ones', () => {
    for (const messageTemplate of [
      '{{.Link}}',
      'Publish {{.NewVersion}} {{.Version}}',
      '{{ .site }}',
      '{{}}',
    ])
      expect(messages({ ...repo, messageTemplate })).toEqual([
        "messageTemplate: spec.gitWriteBack.messageTemplate may only use the placeholders .Site, .OldVersion, .NewVersion and .Release, each between double curly braces as in Flux's commit templates; double curly braces hold nothing else",
      ]);
    expect(messages({ ...repo, messageTemplate: '' })).toEqual([
      'messageTemplate: spec.gitWriteBack.messageTemplate must not be empty: leave it out for the default message',
    ]);
  });

  it('refuses a secretRef that is no Secret name', () => {
    expect(messages({ ...repo, secretRef: { name: 'GitOps_Token' } })).toEqual([
      expect.stringMatching(
        /^secretRef\.name: spec\.gitWriteBack\.secretRef\.name must be a Kubernetes object name/,
      ),
    ]);
  });

  it('requires url and path', () => {
    expect(messages({ path: repo.path }).map((m) => m.split(':')[0])).toEqual(['url']);
    expect(messages({ url: repo.url }).map((m) => m.split(':')[0])).toEqual(['path']);
  });
});

describe('spec.gitWriteBack refuses what git or a URL parser would read otherwise (issue 39)', () => {
  it.each([
    [
      'NUL in author.name',
      { author: { name: 'Docs\u0000Bot' } },
      'author.name',
      /must not contain '<', '>', a line break or another control character/,
    ],
    ['a tab in author.name', { author: { name: 'Docs\tBot' } }, 'author.name', /another control character/],
    [
      'NUL in author.email',
      { author: { email: 'bot\u0000@example.com' } },
      'author.email',
      /must be an e-mail address/,
    ],
    [
      'NUL in messageTemplate',
      { messageTemplate: 'Publish\u0000{{.NewVersion}}' },
      'messageTemplate',
      /must not contain control characters other than line breaks and tabs/,
    ],
    [
      'an escape in messageTemplate',
      { messageTemplate: 'Publish \u001b[31m' },
      'messageTemplate',
      /control characters/,
    ],
  ])('%s', (_what, change, field, message) => {
    expect(messages({ ...repo, ...change })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${field.replace('.', '\\.')}: spec\\.gitWriteBack\\.${field.replace('.', '\\.')} .*${message.source}`,
        ),
      ),
    ]);
  });

  it('a message keeps its line breaks and tabs', () => {
    expect(messages({ ...repo, messageTemplate: 'Publish {{.NewVersion}}\n\n\tby {{.Release}}' })).toEqual(
      [],
    );
  });

  it.each([
    'HEAD',
    'refs/heads/main',
    'x.lock/y',
    'main.',
    'env/prod.lock',
    'a/.b',
    'a@{1}',
    'a~1',
    'a:b',
    'a b',
    'a\\b',
    '-x',
  ])('refuses the branch %s (git check-ref-format --branch)', (branch) => {
    expect(messages({ ...repo, branch })).toEqual([
      expect.stringMatching(
        /^branch: spec\.gitWriteBack\.branch must be a branch name such as main .*as git check-ref-format takes it/,
      ),
    ]);
  });

  it.each(['main', 'env/production', 'release-1.2', 'x.locked/y', 'HEADS', 'refs', 'feature/refs/x'])(
    'takes the branch %s',
    (branch) => {
      expect(messages({ ...repo, branch })).toEqual([]);
    },
  );

  it.each([
    'clusters/\u0000/values.yaml',
    '.GIT/values.yaml',
    '.Git/config.yaml',
    '.git./values.yaml',
    '.git . /values.yaml',
    'GIT~1/values.yaml',
    'a/git~1/values.yaml',
    '.git::$INDEX_ALLOCATION/values.yaml',
    '.g\u200cit/values.yaml',
    'clusters\\prod\\values.yaml',
    'clusters/prod\tx/values.yaml',
  ])('refuses the path %j (git verify_path, NTFS and HFS spellings of .git)', (path) => {
    expect(messages({ ...repo, path })).toEqual([
      expect.stringMatching(
        /^path: spec\.gitWriteBack\.path must be a YAML file relative to the repository root/,
      ),
    ]);
  });

  it.each([
    '.github/values.yaml',
    'git/values.yaml',
    '.gitops/values.yaml',
    'apps/.argocd-source-docs.yaml',
    'git~2/values.yaml',
  ])('takes the path %s', (path) => {
    expect(messages({ ...repo, path })).toEqual([]);
  });

  it.each([
    ['backslashes for slashes, credentials after them', 'https:\\\\bot:ghp_t0ken@github.com/acme/gitops.git'],
    ['a tab in the scheme', 'ht\ttps://bot:ghp_t0ken@github.com/acme/gitops.git'],
    ['a space in the host', 'https://git hub.com/acme/gitops.git'],
    ['a line break', 'https://github.com/acme/\ngitops.git'],
  ])('refuses a URL with %s, without repeating it', (_what, url) => {
    const found = messages({ ...repo, url });
    expect(found).toContain(
      "url: spec.gitWriteBack.url must not contain spaces, control characters or backslashes: write the repository's https:// URL as its server shows it",
    );
    expect(found.join()).not.toContain('ghp_t0ken');
  });
});
