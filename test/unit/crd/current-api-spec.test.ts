// spec.projectId selects the platform's current export API, spec.domain the contract's: exactly one,
// and each revision's own fields only with it, each refusal naming the fields and the fix.
import { describe, expect, it } from 'vitest';
import { staticExportReleaseSpecSchema } from '../../../src/crd/index.ts';

const base = { credentialsSecretRef: { name: 'key' }, target: { valuesSecret: { name: 'values' } } };
const PROJECT = '6520f3a1c9b1a20012ab34cd';
const messages = (spec: object) => {
  const r = staticExportReleaseSpecSchema.safeParse({ ...base, ...spec });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('spec.projectId and spec.domain', () => {
  it('accepts a project with a base path and a budget group', () => {
    expect(messages({ projectId: PROJECT, basePath: '/docs', startBudget: { group: 'acme' } })).toEqual([]);
    expect(messages({ projectId: PROJECT, basePath: '' })).toEqual([]);
  });

  it('refuses both, and neither', () => {
    expect(messages({ projectId: PROJECT, domain: 'docs.example.com' })).toEqual([
      expect.stringMatching(/names exactly one of spec\.projectId .* or spec\.domain .*: remove the other/),
    ]);
    expect(messages({})).toEqual([expect.stringMatching(/either spec\.projectId or spec\.domain/)]);
  });

  it("refuses each revision's own fields with the other", () => {
    expect(messages({ domain: 'docs.example.com', basePath: '/docs' })).toEqual([
      expect.stringMatching(/spec\.basePath and spec\.startBudget .* only with spec\.projectId/),
    ]);
    expect(messages({ projectId: PROJECT, export: { versionLabel: 'v1' } })).toEqual([
      expect.stringMatching(/spec\.export .* only with spec\.domain/),
    ]);
  });

  it('refuses a malformed project id, base path or group, naming the field', () => {
    expect(messages({ projectId: 'has space' })).toEqual([
      expect.stringMatching(/^projectId: spec\.projectId must be/),
    ]);
    expect(messages({ projectId: PROJECT, basePath: '/api' })).toEqual([
      'basePath: spec.basePath must be one of "", "/docs", "/documentation" (absent: the deployment\'s configured base path)',
    ]);
    expect(messages({ projectId: PROJECT, startBudget: { group: 'Acme Corp' } })).toEqual([
      expect.stringMatching(/^startBudget\.group: spec\.startBudget\.group must be a lowercase name/),
    ]);
    for (const startsPerHour of [0, 11, 2.5])
      expect(messages({ projectId: PROJECT, startBudget: { startsPerHour } })).toEqual([
        expect.stringMatching(
          /^startBudget\.startsPerHour: spec\.startBudget\.startsPerHour must be a whole number from 1 to 10/,
        ),
      ]);
  });

  it("accepts a group's share of the hour, with or without a group name", () => {
    expect(messages({ projectId: PROJECT, startBudget: { startsPerHour: 4 } })).toEqual([]);
    expect(messages({ projectId: PROJECT, startBudget: { group: 'acme', startsPerHour: 10 } })).toEqual([]);
  });
});
