// SSH repository URLs: both forms Git reads, shown and compared as ssh://user@host[:port]/path.
import { describe, expect, it } from 'vitest';
import { describeSshRemote, isSshUrl, parseSshUrl, sshUrlForm } from '../../../src/git/ssh-url.ts';

describe('SSH URLs', () => {
  it('rewrites the scp-like form as ssh://user@host/path', () => {
    expect(sshUrlForm('git@github.com:acme/gitops.git')).toBe('ssh://git@github.com/acme/gitops.git');
    expect(sshUrlForm('deploy@git.internal:/srv/git/gitops.git')).toBe(
      'ssh://deploy@git.internal/srv/git/gitops.git',
    );
    expect(sshUrlForm('https://github.com/acme/gitops.git')).toBe('https://github.com/acme/gitops.git');
  });

  it('parses user, host, port and the path sent to the server; the user defaults to git', () => {
    expect(parseSshUrl('ssh://deploy@Git.Internal:2222/srv/git/a%20b.git')).toEqual({
      user: 'deploy',
      host: 'git.internal',
      port: 2222,
      path: '/srv/git/a b.git',
    });
    expect(parseSshUrl('ssh://github.com/acme/gitops.git')).toMatchObject({ user: 'git', port: 22 });
    expect(parseSshUrl('git@github.com:acme/gitops.git')).toEqual({
      user: 'git',
      host: 'github.com',
      port: 22,
      path: '/acme/gitops.git',
    });
  });

  it('refuses a password, a query, a fragment or no path', () => {
    for (const url of [
      'ssh://git:pw@github.com/a.git',
      'ssh://git@github.com/a.git?x=1',
      'ssh://git@github.com/a.git#x',
      'ssh://git@github.com/',
      'https://github.com/a.git',
    ])
      expect(parseSshUrl(url), url).toBeUndefined();
  });

  it('shows a remote with its port only when not 22', () => {
    expect(describeSshRemote({ user: 'git', host: 'github.com', port: 22, path: '/a/b.git' })).toBe(
      'ssh://git@github.com/a/b.git',
    );
    expect(describeSshRemote({ user: 'git', host: '::1', port: 2222, path: '/a/b.git/' })).toBe(
      'ssh://git@[::1]:2222/a/b.git',
    );
  });

  it('tells SSH URLs from others', () => {
    expect(isSshUrl('git@github.com:a/b.git')).toBe(true);
    expect(isSshUrl('SSH://github.com/a/b.git')).toBe(true);
    expect(isSshUrl('https://git@github.com/a/b.git')).toBe(false);
    expect(isSshUrl('github.com:a/b.git')).toBe(false);
  });
});
