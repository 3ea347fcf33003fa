import { describe, expect, it } from 'vitest';
import { apiBaseUrlRefusal } from '../../../src/api/base-url-policy.ts';
import { gitUrlAllowed, insecureGitUrl, normalizeGitUrl } from '../../../src/git/url-policy.ts';

const policy = (allowed: string[], allowInsecure = false) => ({ allowed, allowInsecure });
const REPO = 'https://github.com/acme/gitops.git';

describe('gitUrlAllowed', () => {
  it('allows a listed repository however it is spelled: with or without .git, trailing slash, host case', () => {
    for (const url of [
      REPO,
      'https://github.com/acme/gitops',
      'https://github.com/acme/gitops/',
      'https://GitHub.com:443/acme/gitops.git',
    ])
      expect(gitUrlAllowed(url, policy([REPO]))).toEqual({ allowed: true });
  });

  it('refuses another repository, naming the field, the allowed ones and the flag', () => {
    for (const url of [
      'https://github.com/acme/other.git',
      'https://github.com/acme/gitops-fork.git',
      'https://github.com/acme',
      'https://github.com/acme/gitops/sub',
      'https://github.com.attacker.example/acme/gitops.git',
      'https://github.com:8443/acme/gitops.git',
    ]) {
      const check = gitUrlAllowed(url, policy([REPO, 'https://git.example.com/docs/sites']));
      expect(check).toEqual({
        allowed: false,
        reason: 'GitUrlRefused',
        message: expect.stringMatching(
          /^spec\.gitWriteBack\.url \S+ is not a Git repository this operator pushes to \(allowed: https:\/\/github\.com\/acme\/gitops, https:\/\/git\.example\.com\/docs\/sites\): use one of those, or add it to the operator flag --allowed-git-urls$/,
        ),
      });
    }
  });

  it('refuses every repository when the list is empty, as spec.apiBaseUrl without --allowed-api-base-urls', () => {
    const check = gitUrlAllowed(REPO, policy([]));
    expect(check.allowed === false && check.message).toContain('(allowed: none)');
    expect(apiBaseUrlRefusal('https://api.example.com', 'spec.apiBaseUrl', policy([]))).toContain(
      '(allowed: none)',
    );
  });

  it('refuses plain http, loopback too, unless --allow-insecure-git-url', () => {
    for (const url of ['http://git.internal:3000/acme/gitops', 'http://127.0.0.1:3000/acme/gitops']) {
      const check = gitUrlAllowed(url, policy([url]));
      expect(check.allowed === false && check.message).toMatch(
        /^spec\.gitWriteBack\.url http:\S+ uses plain http: the token and the commits would cross the network unencrypted: use https, or start the operator with --allow-insecure-git-url$/,
      );
      expect(gitUrlAllowed(url, policy([url], true))).toEqual({ allowed: true });
    }
    // https and http name different repositories: listing one does not allow the other.
    expect(gitUrlAllowed('http://github.com/acme/gitops', policy([REPO], true)).allowed).toBe(false);
  });

  it('never repeats credentials a URL carries', () => {
    const check = gitUrlAllowed('https://bot:ghp_T0kenValue@github.com/acme/other.git', policy([REPO]));
    expect(check.allowed === false && check.message).not.toMatch(/bot|ghp_T0kenValue/);
  });

  it('refuses what is not an http(s) or SSH URL', () => {
    const check = gitUrlAllowed(
      'git://github.com/acme/gitops.git',
      policy(['git://github.com/acme/gitops.git']),
    );
    expect(check.allowed === false && check.message).toMatch(/not an absolute http\(s\) URL/);
  });

  it('allows a listed SSH repository in either form, with or without .git, the port 22 or the user git implied', () => {
    const listed = policy(['git@github.com:acme/gitops.git']);
    for (const url of [
      'git@github.com:acme/gitops.git',
      'ssh://git@github.com/acme/gitops.git',
      'ssh://github.com:22/acme/gitops',
    ])
      expect(gitUrlAllowed(url, listed)).toEqual({ allowed: true });
  });

  it('refuses an SSH repository on another host, port, user or path, naming it in its ssh:// form', () => {
    const listed = policy(['ssh://git@github.com/acme/gitops.git']);
    for (const url of [
      'git@gitlab.com:acme/gitops.git',
      'ssh://git@github.com:2222/acme/gitops.git',
      'deploy@github.com:acme/gitops.git',
      'git@github.com:acme/other.git',
    ]) {
      const check = gitUrlAllowed(url, listed);
      expect(check.allowed, url).toBe(false);
      expect(check.allowed === false && check.message).toContain(
        '(allowed: ssh://git@github.com/acme/gitops)',
      );
    }
    const scp = gitUrlAllowed('git@gitlab.com:acme/gitops.git', listed);
    expect(scp.allowed === false && scp.message).toContain(
      'spec.gitWriteBack.url ssh://git@gitlab.com/acme/gitops is not',
    );
  });

  it('answers by the policy asked with, not an earlier answer for the same URL', () => {
    const url = 'http://git.internal/acme/gitops';
    expect(gitUrlAllowed(url, policy([url], true)).allowed).toBe(true);
    expect(gitUrlAllowed(url, policy([url])).allowed).toBe(false);
    // The admin API's answer for the same URL and policy is its own: loopback rules differ.
    const loopback = 'http://127.0.0.1:8787';
    expect(apiBaseUrlRefusal(loopback, 'f', policy([loopback]))).toBeUndefined();
    expect(gitUrlAllowed(loopback, policy([loopback])).allowed).toBe(false);
  });
});

describe('helpers', () => {
  it('normalizeGitUrl gives the spellings of one repository one form (the key writes to it queue under)', () => {
    const key = normalizeGitUrl('https://github.com/org/gitops.git');
    expect(normalizeGitUrl('https://GitHub.com/org/gitops')).toBe(key);
    expect(normalizeGitUrl('https://github.com/org/gitops/')).toBe(key);
    expect(normalizeGitUrl('https://github.com:443/org/gitops.git')).toBe(key);
    expect(normalizeGitUrl('https://github.com/org/other.git')).not.toBe(key);
  });

  it('normalizeGitUrl drops user info, query, trailing slashes and .git', () => {
    expect(normalizeGitUrl('https://u:p@Git.Example.com/a/b.git/?x=1#f')).toBe('https://git.example.com/a/b');
    expect(normalizeGitUrl('git@github.com:a/b.git')).toBe('ssh://git@github.com/a/b');
    expect(normalizeGitUrl('ssh://Git.Example.com:2222/a/b.git/')).toBe('ssh://git@git.example.com:2222/a/b');
    expect(normalizeGitUrl('ssh://git:pw@github.com/a/b.git')).toBeUndefined();
  });

  it('insecureGitUrl says why an http entry needs the flag', () => {
    expect(insecureGitUrl('http://git.internal/a/b.git', false)).toBe(
      'http://git.internal/a/b uses plain http: the token and the commits would cross the network unencrypted',
    );
    expect(insecureGitUrl('http://git.internal/a/b.git', true)).toBeUndefined();
    expect(insecureGitUrl(REPO, false)).toBeUndefined();
  });
});
