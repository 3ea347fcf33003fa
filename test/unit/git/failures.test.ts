// A server's reason (a pre-receive hook's output) is quoted as one safe, short line.
import { Errors } from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { redactor } from '../../../src/git/echoed-credentials.ts';
import { isNonFastForward, movedUnderLock, serverReason } from '../../../src/git/failures.ts';

describe('serverReason', () => {
  it('the first non-empty line, trimmed', () => {
    expect(serverReason(['', '  \n', 'protected branch: use a merge request\n', 'second'])).toBe(
      'protected branch: use a merge request',
    );
  });

  it('terminal escapes and carriage returns shown, not obeyed', () => {
    expect(serverReason(['\u001b]52;c;ZXZpbA==\u0007denied\rforged'])).toBe(
      '\\u001b]52;c;ZXZpbA==\\u0007denied\\u000dforged',
    );
  });

  it('truncated to 200 characters', () => {
    const reason = serverReason(['x'.repeat(1000)]);
    expect(reason).toHaveLength(200);
    expect(reason?.endsWith('…')).toBe(true);
  });

  it('nothing when every line is empty', () => {
    expect(serverReason(['', ' '])).toBeUndefined();
  });
});

describe('server text is read in linear time', () => {
  const pushError = (why: string) =>
    new Errors.GitPushError('rejected', {
      ok: false,
      error: '',
      refs: { 'refs/heads/main': { ok: false, error: why } },
    });

  it('a 1 MiB line of "cannot lock ref " (quadratic for a backtracking regex) is read at once', () => {
    const line = 'cannot lock ref '.repeat(65_536);
    expect(isNonFastForward(pushError('hook declined'), [line])).toBe(false);
    expect(serverReason([line])).toMatch(/^(cannot lock ref )+[a-z ]*…$/);
  });

  it("git's own line when the ref moved under the update still means non-fast-forward", () => {
    const line = "error: cannot lock ref 'refs/heads/main': is at 1a2b3c but expected 4d5e6f";
    expect(movedUnderLock(line)).toBe(true);
    expect(movedUnderLock(line.toUpperCase())).toBe(true);
    expect(movedUnderLock("cannot lock ref 'x': is at 1a2b but expected ")).toBe(false);
    expect(movedUnderLock("is at 1a2b but expected 3c4d, cannot lock ref 'x'")).toBe(false);
    expect(isNonFastForward(pushError('failed to update ref'), ['remote: x', line])).toBe(true);
  });
});

describe('a reason is redacted before it is cut', () => {
  const credentials = {
    kind: 'basic' as const,
    username: 'writer',
    password: 'ghp_S3cr3tT0kenValue0123456789abcd',
  };

  it('a token straddling the cut: none of it is left', () => {
    const reason = serverReason(
      [`${'x'.repeat(170)}${credentials.password} rejected`],
      redactor(credentials),
    );
    expect(reason).toBe(`${'x'.repeat(170)}[REDACTED] rejected`);
  });

  it('every form a server may echo', () => {
    const pair = `${credentials.username}:${credentials.password}`;
    const redact = redactor(credentials);
    for (const echoed of [
      credentials.password,
      pair,
      Buffer.from(pair).toString('base64'),
      Buffer.from(pair).toString('base64url'),
      Buffer.from(credentials.password).toString('base64').replace(/=+$/, ''),
      encodeURIComponent(pair),
    ])
      expect(redact(`denied (${echoed})`, 200)).toBe('denied ([REDACTED])');
  });
});
