// A server's reason (a pre-receive hook's output) is quoted as one safe, short line.
import { describe, expect, it } from 'vitest';
import { serverReason } from '../../../src/git/failures.ts';

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
