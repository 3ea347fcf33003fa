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
        site: { domain: 'a.example.com' },
        name: 'a.example.com',
        reference: { registry: 'registry.internal:5000', repository: 'docs/a.example.com' },
      },
      {
        site: { domain: 'b.example.com' },
        name: 'b.example.com',
        reference: { registry: 'other.internal', repository: 'b' },
      },
    ]);
  });

  it('takes a site of the current API revision by projectId (and basePath), into <target>/<projectId>', () => {
    const { targets } = parseSyncConfig(
      'target: oci://r.example/docs\ndomains:\n  - projectId: acme\n    basePath: /docs\n  - projectId: other\n    repository: oci://r.example/o\n',
      'mirror.yaml',
    );
    expect(targets).toEqual([
      {
        site: { projectId: 'acme', basePath: '/docs' },
        name: 'project acme (base path "/docs")',
        reference: { registry: 'r.example', repository: 'docs/acme' },
      },
      {
        site: { projectId: 'other' },
        name: 'project other',
        reference: { registry: 'r.example', repository: 'o' },
      },
    ]);
  });

  it.each([
    [
      '{domain: a.example.com, projectId: acme}',
      /domains\.0 names both domain and projectId: give exactly one/,
    ],
    ['{repository: oci://r.example/y}', /domains\.0 names no site: give exactly one, domain .* or projectId/],
    ['{domain: a.example.com, basePath: /docs}', /domains\.0\.basePath applies to a projectId only/],
    [
      '{projectId: acme, basePath: /guides}',
      /domains\.0\.basePath Invalid option: expected one of ""\|"\/docs"\|"\/documentation"/,
    ],
    ['{projectId: "a b"}', /domains\.0\.projectId must be 1 to 64 letters/],
  ])('refuses the site %s naming the field', (site, why) => {
    expect(() =>
      parseSyncConfig(`target: oci://r.example/x\ndomains:\n  - ${site}\n`, 'mirror.yaml'),
    ).toThrow(why);
  });

  it('refuses one project twice, and one project under two base paths into one repository', () => {
    const config = (sites: string[]) =>
      `target: oci://r.example/x\ndomains:\n${sites.map((s) => `  - ${s}\n`).join('')}`;
    expect(() => parseSyncConfig(config(['projectId: p', 'projectId: p']), 'm.yaml')).toThrow(
      'm.yaml: project p is listed twice',
    );
    expect(() =>
      parseSyncConfig(config(['projectId: p', '{projectId: p, basePath: /docs}']), 'm.yaml'),
    ).toThrow(
      'project p and project p (base path "/docs") would both go to r.example/x/p: give one of them its own repository',
    );
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
