// docs/gitops.md's table of write-back's memory bounds, against the limits the engine applies.
import { describe, expect, it } from 'vitest';
import { GIT_HTTP_LIMITS } from '../../../src/git/http-transport.ts';
import { PACK_LIMITS } from '../../../src/git/pack-bounds.ts';
import { readRepoFile, sectionRows } from '../../support/fixtures/markdown.ts';

const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`);

describe('docs/gitops.md', () => {
  it('states the bounds write-back applies', () => {
    const rows = sectionRows(readRepoFile('docs/gitops.md'), 'Write-back to Git');
    const limit = (bound: RegExp) => rows.find((r) => bound.test(r[0] ?? ''))?.[1];
    expect(limit(/^pack on the wire/)).toBe(size(GIT_HTTP_LIMITS.maxResponseBytes));
    expect(limit(/^the tip inflated/)).toBe(size(PACK_LIMITS.maxInflatedBytes));
    expect(limit(/^objects in the tip/)).toBe(PACK_LIMITS.maxObjects.toLocaleString('en-US'));
    expect(limit(/^directory listings/)).toBe(size(PACK_LIMITS.maxTreeBytes));
    expect(limit(/^ref advertisement/)).toBe(size(GIT_HTTP_LIMITS.maxRefsBytes));
    expect(limit(/^the server's answer to a push/)).toBe(size(GIT_HTTP_LIMITS.maxPushAnswerBytes));
  });
});
