import { describe, expect, it } from 'vitest';
import { decidePublish, tagsToMove, versionsToPrune } from '../../../src/oci/publish.ts';
import { parseSyncConfig } from '../../../src/oci/sync.ts';

const v = (n: number, created?: string) => ({
  tag: `sha256-${String(n).repeat(64).slice(0, 64)}`,
  digest: `sha256:${String(n).repeat(64).slice(0, 64)}`,
  created,
});

describe('publish decisions', () => {
  it('skips a version the repository has, pushes one it does not', () => {
    expect(decidePublish(undefined)).toEqual({ action: 'push' });
    expect(decidePublish({ digest: 'sha256:x' })).toEqual({ action: 'skip', digest: 'sha256:x' });
  });

  it('moves only the tags that do not point at the version yet', () => {
    expect(tagsToMove('sha256:a', { latest: 'sha256:b', stable: 'sha256:a', beta: undefined })).toEqual([
      'latest',
      'beta',
    ]);
  });

  it('prunes beyond the newest N by creation time, never a protected digest', () => {
    const versions = [
      v(1, '2026-01-01T00:00:00Z'),
      v(3, '2026-01-03T00:00:00Z'),
      v(2, '2026-01-02T00:00:00Z'),
      v(4),
    ];
    expect(versionsToPrune(versions, 2, new Set()).map((x) => x.tag)).toEqual([v(1).tag, v(4).tag]);
    // The followed tag still points at the oldest: it stays.
    expect(versionsToPrune(versions, 2, new Set([v(1).digest])).map((x) => x.tag)).toEqual([v(4).tag]);
    expect(versionsToPrune(versions, 10, new Set())).toEqual([]);
  });
});

describe('parseSyncConfig', () => {
  it('puts each domain under the target prefix unless it names its own repository', () => {
    const { config, targets } = parseSyncConfig(
      'target: oci://registry.internal:5000/docs\nkeep: 3\ndomains:\n  - a.example.com\n  - domain: b.example.com\n    repository: oci://other.internal/b\n',
      'mirror.yaml',
    );
    expect(config).toMatchObject({ tags: ['latest'], keep: 3, concurrency: 4 });
    expect(targets).toEqual([
      {
        domain: 'a.example.com',
        reference: { registry: 'registry.internal:5000', repository: 'docs/a.example.com' },
      },
      { domain: 'b.example.com', reference: { registry: 'other.internal', repository: 'b' } },
    ]);
  });

  it.each([
    ['target: [', /mirror.yaml is not valid YAML/],
    ['domains: [a.example.com]', /mirror.yaml: target/],
    ['target: oci://r.example/x\ndomains: []', /mirror.yaml: domains/],
    ['target: oci://r.example/x:tag\ndomains: [a.example.com]', /without :tag/],
    [
      `target: oci://r.example/x\ntags: [sha256-${'a'.repeat(64)}]\ndomains: [a.example.com]`,
      /tags\.0 version tags/,
    ],
    ['target: oci://r.example/x\nconcurrency: 0\ndomains: [a.example.com]', /concurrency/],
  ])('refuses %j naming the field', (text, why) => {
    expect(() => parseSyncConfig(text, 'mirror.yaml')).toThrow(why);
  });
});
