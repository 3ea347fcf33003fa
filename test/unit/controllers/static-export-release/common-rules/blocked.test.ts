import { describe, expect, it } from 'vitest';
import type { Failure } from '../../../../../src/controllers/failures.ts';
import { blocked } from '../../../../../src/controllers/static-export-release/common-rules/blocked.ts';
import { platformCase, release } from '../../../../support/fixtures/release-fixtures.ts';

const f: Failure = { reason: 'SecretNotFound', message: 'Secret web/key not found', stalled: true };

describe('blocked', () => {
  it.each([
    ['nothing found before the calls', {}, undefined],
    ['a problem found before the calls is all there is to say', { blocked: f }, f],
  ])('%s', (_, extra, failure) => {
    const d = blocked.apply(platformCase(release(), extra));
    expect(d?.failure).toEqual(failure);
    if (d) {
      expect(d.action).toEqual({ kind: 'none' });
      expect(d.events).toEqual([{ type: 'Warning', reason: 'SecretNotFound', note: f.message }]);
    }
  });
});
