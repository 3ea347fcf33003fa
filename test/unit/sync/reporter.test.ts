import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../../src/redact.ts';
import { conditionFor } from '../../../src/sync/reporter.ts';

const OLD = `sha256-${'a'.repeat(64)}`;
const NEW = `sha256-${'b'.repeat(64)}`;

describe('the ContentServed pod condition', () => {
  it('says which version is served', () => {
    expect(conditionFor({ kind: 'serving', version: NEW })).toEqual({
      type: 'staticexport.dev/ContentServed',
      status: 'True',
      reason: 'Serving',
      message: `serving ${NEW}`,
    });
  });

  it('says what is still served and why the new version failed, without the link', () => {
    const link = 'https://cdn.example.com/b/bundle.tar.gz?sig=0123456789abcdef';
    registerSecret(link);
    const condition = conditionFor({
      kind: 'fetchFailed',
      served: OLD,
      version: NEW,
      cause: `GET ${link} answered 403`,
    });
    expect(condition).toMatchObject({ status: 'False', reason: 'FetchFailed' });
    expect(condition.message).toMatch(new RegExp(`^serving ${OLD}; ${NEW} failed: GET `));
    expect(condition.message).not.toContain('0123456789abcdef');
  });

  it('says nothing is served yet when the first version failed', () => {
    expect(
      conditionFor({ kind: 'fetchFailed', served: undefined, version: NEW, cause: 'refused' }).message,
    ).toBe(`serving nothing; ${NEW} failed: refused`);
  });
});
