import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { agentJobSpecSchema, parseDuration, staticExportReleaseSpecSchema } from '../../../src/crd/index.ts';
import { pageDropPercent } from '../../../src/crd/limits.ts';
import { crdObjects, renderCrdFiles } from '../../../src/crd/manifests.ts';
import { toStructuralSchema } from '../../../src/crd/structural.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('generated CRDs', () => {
  it('crds/ matches what `npm run generate` writes (run it after changing src/crd)', () => {
    const files = renderCrdFiles();
    expect(readdirSync(join(ROOT, 'crds')).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) {
      expect(readFileSync(join(ROOT, 'crds', name), 'utf8'), `crds/${name} is stale`).toBe(text);
    }
  });

  it('are structural: no $ref, no additionalProperties beside properties', () => {
    const walk = (node: unknown, path: string): void => {
      if (!node || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      expect(n.$ref, path).toBeUndefined();
      if (n.properties) expect(n.additionalProperties, path).toBeUndefined();
      for (const [k, v] of Object.entries(n)) walk(v, `${path}.${k}`);
    };
    for (const crd of crdObjects()) walk(crd.spec.versions[0]?.schema.openAPIV3Schema, crd.metadata.name);
  });

  it('describe every field, in src/crd and in crds/ (kubectl explain prints each description)', () => {
    type Node = { description?: string; properties?: Record<string, Node>; items?: Node };
    const undescribed = (node: Node, path: string): string[] =>
      Object.entries(node.properties ?? {}).flatMap(([name, child]) => [
        // The root's metadata may carry nothing but its type: kubectl explain shows ObjectMeta's texts.
        ...(child.description?.trim() || `${path}${name}` === 'metadata' ? [] : [`${path}${name}`]),
        ...undescribed(child, `${path}${name}.`),
        ...(child.items ? undescribed(child.items, `${path}${name}[].`) : []),
      ]);
    const fromCode = crdObjects().map((crd) => ({
      kind: crd.spec.names.kind,
      schema: crd.spec.versions[0]?.schema.openAPIV3Schema as Node,
    }));
    const fromFiles = readdirSync(join(ROOT, 'crds')).map((file) => {
      const crd = parseAllDocuments(readFileSync(join(ROOT, 'crds', file), 'utf8'))[0]?.toJS();
      return { kind: `crds/${file}`, schema: crd.spec.versions[0].schema.openAPIV3Schema as Node };
    });
    expect(fromCode).toHaveLength(2);
    expect(fromFiles).toHaveLength(2);
    for (const { kind, schema } of [...fromCode, ...fromFiles]) {
      expect(schema.description, `${kind}: the kind's own description`).toBeTruthy();
      expect(undescribed(schema, ''), `${kind}: fields without .describe()`).toEqual([]);
    }
    // It can fail: a field without one is found.
    expect(undescribed({ properties: { a: { description: 'x', properties: { b: {} } } } }, '')).toEqual([
      'a.b',
    ]);
  });

  it('default status.observedGeneration to -1, so kstatus does not call a new object Current before its first reconcile', () => {
    for (const crd of crdObjects()) {
      const status = crd.spec.versions[0]?.schema.openAPIV3Schema.properties.status as {
        default?: unknown;
        properties: { observedGeneration: { default?: unknown } };
      };
      // The API server fills nested defaults only inside an object that exists: status itself defaults to {}.
      expect(status.default, crd.metadata.name).toEqual({});
      expect(status.properties.observedGeneration.default, crd.metadata.name).toBe(-1);
    }
  });

  it('refuses to generate a schema the API server would not take', () => {
    expect(() => toStructuralSchema(z.object({ a: z.union([z.string(), z.number()]) }))).toThrow(
      /\.a: anyOf is not allowed/,
    );
  });
});

describe('runtime validation gives the same messages as the API server', () => {
  const base = {
    domain: 'docs.example.com',
    credentialsSecretRef: { name: 'k' },
    target: { valuesSecret: { name: 'v' } },
  };
  const messages = (spec: unknown) =>
    staticExportReleaseSpecSchema
      .safeParse(spec)
      .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];

  it('accepts a valid spec and applies defaults', () => {
    const spec = staticExportReleaseSpecSchema.parse(base);
    expect(spec.credentialsSecretRef?.key).toBe('apiKey');
    expect(spec.rollout.onLinkRenewal).toBe('None');
    expect(spec.target.valuesSecret?.key).toBe('values.yaml');
    expect(spec.publishGate).toEqual({ minPages: 1, maxPageDrop: '50%', disabled: false });
  });

  it('takes maxPageDrop as "30%" or 30, and reads either as 30 percent', () => {
    for (const maxPageDrop of ['30%', 30]) {
      const spec = staticExportReleaseSpecSchema.parse({ ...base, publishGate: { maxPageDrop } });
      expect(pageDropPercent(spec.publishGate.maxPageDrop)).toBe(30);
      expect(spec.publishGate.minPages).toBe(1);
    }
  });

  it.each([
    [{ domain: 'https://docs.example.com' }, /^domain: spec\.domain must be a bare lowercase host name/],
    [{ interval: '30s' }, /^interval: spec\.interval must be from 1m to 8760h \(365 days\)$/],
    [{ interval: '9999999999999999h' }, /^interval: spec\.interval must be from 1m to 8760h \(365 days\)$/],
    [{ interval: 'daily' }, /^interval: spec\.interval must be a duration/],
    [{ apiBaseUrl: 'api.example.com' }, /^apiBaseUrl: spec\.apiBaseUrl must be an absolute http\(s\) URL/],
    // The platform publishes its server with /v1; the client adds it, so every call would be /v1/v1/...
    [
      { apiBaseUrl: 'https://api.mintlify.com/v1' },
      /^apiBaseUrl: spec\.apiBaseUrl must not end in \/v1: .*e\.g\. https:\/\/api\.mintlify\.com$/,
    ],
    [
      { apiBaseUrl: 'https://proxy.example.com/mintlify/v2/' },
      /^apiBaseUrl: spec\.apiBaseUrl must not end in \/v1/,
    ],
    [
      { publishGate: { maxPageDrop: '150%' } },
      /^publishGate\.maxPageDrop: spec\.publishGate\.maxPageDrop must be a percentage such as "50%"/,
    ],
    [
      { publishGate: { maxPageDrop: 50.5 } },
      /^publishGate\.maxPageDrop: spec\.publishGate\.maxPageDrop must be/,
    ],
    [
      { target: { valuesSecret: { name: 'v', key: 'bundleUrl' } } },
      /^target\.valuesSecret\.key: spec\.target\.valuesSecret\.key must not be bundleUrl or version: the Secret holds those keys for the site chart$/,
    ],
    [
      { rollout: { timeout: '0s' } },
      /^rollout\.timeout: spec\.rollout\.timeout must be from 1s to 8760h \(365 days\)$/,
    ],
    [
      { publishGate: { minPages: -1 } },
      /^publishGate\.minPages: spec\.publishGate\.minPages must be 0 or more$/,
    ],
  ])('refuses %j', (override, message) => {
    expect(messages({ ...base, ...override })).toEqual([expect.stringMatching(message)]);
  });

  it.each(['https://api.mintlify.com', 'https://api.mintlify.com/', 'https://v1.example.com/platform-v1'])(
    'takes the base URL %s: only a path ending in a version is refused',
    (apiBaseUrl) => {
      expect(messages({ ...base, apiBaseUrl })).toEqual([]);
    },
  );

  it('refuses an AgentJob apiBaseUrl ending in /v1 as the release does', () => {
    const r = agentJobSpecSchema.safeParse({
      projectId: 'p',
      prompt: 'x',
      credentialsSecretRef: { name: 'k' },
      apiBaseUrl: 'https://api.mintlify.com/v1/',
    });
    expect(r.error?.issues.map((i) => i.message)).toEqual([expect.stringMatching(/must not end in \/v1/)]);
  });

  it('refuses an empty AgentJob prompt', () => {
    const r = agentJobSpecSchema.safeParse({
      projectId: 'p',
      prompt: '',
      credentialsSecretRef: { name: 'k' },
    });
    expect(r.error?.issues[0]?.path).toEqual(['prompt']);
  });
});

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['2h', 7_200_000],
  ])('parses %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(['', '1d', '1.5h', 'h', '10 s', '-1m'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
