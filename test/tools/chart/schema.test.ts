// values.schema.json rejects what the platform's feature matrix and the chart forbid, in both Helm
// majors (draft-07 keywords only), with an error naming the field.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  A_VERSION,
  CHART_DIR,
  HELMS,
  type HelmName,
  helmTemplate,
  inlineValues,
  OPERATOR_CHART_DIR,
} from '../../support/tools/chart.ts';

const LINK = 'https://bundles.example.com/se_1/bundle.tar.gz?sig=do-not-print-me';

interface Rejection {
  rule: string;
  values: object;
  /** Dotted path of the field the error names (Helm 4 prints /a/b, Helm 3 a.b). */
  field: string;
}

const airGapped = (features: object) => inlineValues(LINK, { deploymentKind: 'airGapped', features });
const clientHosted = (features: object) => inlineValues(LINK, { deploymentKind: 'clientHosted', features });

const REJECTIONS: Rejection[] = [
  { rule: 'enabled needs a link source', values: { staticExport: { enabled: true } }, field: 'staticExport' },
  {
    rule: 'bundleUrl and existingSecret are exclusive',
    values: inlineValues(LINK, { staticExport: { existingSecret: 'docs-site-values' } }),
    field: 'staticExport',
  },
  {
    rule: 'version is sha256-<64 hex>',
    values: inlineValues(LINK, { staticExport: { version: 'v1.2.3' } }),
    field: 'staticExport.version',
  },
  {
    rule: 'existingSecret is a Secret name',
    values: { staticExport: { enabled: true, existingSecret: 'Docs_Values' } },
    field: 'staticExport.existingSecret',
  },
  {
    rule: 'existingSecretKeys are Secret data keys',
    values: {
      staticExport: {
        enabled: true,
        existingSecret: 'docs-site-values',
        existingSecretKeys: { bundleUrl: 'bundle url' },
      },
    },
    field: 'staticExport.existingSecretKeys.bundleUrl',
  },
  {
    rule: 'fetch.timeoutSeconds is a positive number of seconds',
    values: inlineValues(LINK, { staticExport: { fetch: { timeoutSeconds: '10m' } } }),
    field: 'staticExport.fetch.timeoutSeconds',
  },
  {
    rule: 'fetch.retries is a whole number',
    values: inlineValues(LINK, { staticExport: { fetch: { retries: -1 } } }),
    field: 'staticExport.fetch.retries',
  },
  {
    rule: 'fetch.minPages is at least 1',
    values: inlineValues(LINK, { staticExport: { fetch: { minPages: 0 } } }),
    field: 'staticExport.fetch.minPages',
  },
  {
    rule: 'deploymentKind is cloud, clientHosted or airGapped',
    values: inlineValues(LINK, { deploymentKind: 'onPrem' }),
    field: 'deploymentKind',
  },
  {
    rule: 'air-gapped: no search',
    values: airGapped({ search: { enabled: true, host: 'https://search.internal' } }),
    field: 'features.search.enabled',
  },
  {
    rule: 'air-gapped: no assistant',
    values: airGapped({ assistant: { enabled: true, host: 'https://assistant.internal' } }),
    field: 'features.assistant.enabled',
  },
  {
    rule: 'air-gapped: no analytics',
    values: airGapped({ analytics: { enabled: true, host: 'https://analytics.internal' } }),
    field: 'features.analytics.enabled',
  },
  {
    rule: 'air-gapped: the playground only when configured (a host)',
    values: airGapped({ playground: { enabled: true } }),
    field: 'features.playground',
  },
  {
    rule: 'client-hosted: search only when configured',
    values: clientHosted({ search: { enabled: true } }),
    field: 'features.search',
  },
  {
    rule: 'client-hosted: assistant only when configured',
    values: clientHosted({ assistant: { enabled: true, host: '' } }),
    field: 'features.assistant.host',
  },
  {
    rule: 'client-hosted: analytics only when configured',
    values: clientHosted({ analytics: { enabled: true } }),
    field: 'features.analytics',
  },
  {
    rule: 'a feature host is an origin (it goes into the CSP)',
    values: clientHosted({
      search: { enabled: true, host: "https://search.example.com/x; script-src 'unsafe-eval'" },
    }),
    field: 'features.search.host',
  },
  {
    rule: 'unknown features are refused',
    values: inlineValues(LINK, { features: { chat: { enabled: true } } }),
    field: 'features',
  },
  {
    rule: 'unknown keys are refused (typos)',
    values: inlineValues(LINK, { staticExport: { bundleURL: LINK } }),
    field: 'staticExport',
  },
  {
    rule: 'image digest is sha256:<hex>',
    values: inlineValues(LINK, { image: { digest: 'latest' } }),
    field: 'image.digest',
  },
  {
    rule: 'nginx listens on an unprivileged port',
    values: inlineValues(LINK, { containerPort: 80 }),
    field: 'containerPort',
  },
  {
    rule: 'a NetworkPolicy must let the init container reach the bundle host',
    values: inlineValues(LINK, { networkPolicy: { enabled: true } }),
    field: 'networkPolicy.bundleHostPeers',
  },
  {
    rule: 'an Ingress needs hosts',
    values: inlineValues(LINK, { ingress: { enabled: true } }),
    field: 'ingress.hosts',
  },
  {
    rule: 'an HTTPRoute needs parentRefs',
    values: inlineValues(LINK, { httpRoute: { enabled: true } }),
    field: 'httpRoute.parentRefs',
  },
  {
    rule: 'test paths are absolute URL paths',
    values: inlineValues(LINK, { tests: { paths: ['getting-started'] } }),
    field: 'tests.paths',
  },
  {
    rule: 'autoscaling keeps at least one replica',
    values: inlineValues(LINK, { autoscaling: { enabled: true, minReplicas: 0 } }),
    field: 'autoscaling.minReplicas',
  },
];

function fieldPattern(field: string): RegExp {
  return new RegExp(`(/|^|\\s)${field.replaceAll('.', '[./]')}`, 'm');
}

// JSON Schema draft-07's keywords: Helm 3 (gojsonschema) and Helm 4 (jsonschema/v6) both enforce them.
const DRAFT_07 = new Set(
  (
    '$schema $id $ref $comment title description default examples readOnly writeOnly type enum const ' +
    'multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern format ' +
    'items additionalItems maxItems minItems uniqueItems contains maxProperties minProperties required ' +
    'properties patternProperties additionalProperties dependencies propertyNames if then else allOf ' +
    'anyOf oneOf not definitions'
  ).split(' '),
);

function keywords(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) keywords(n, out);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      out.add(key);
      // Under these keywords the keys are names, not keywords.
      if (key === 'properties' || key === 'definitions' || key === 'patternProperties') {
        for (const child of Object.values(value as object)) keywords(child, out);
      } else if (typeof value === 'object') keywords(value, out);
    }
  }
  return out;
}

describe('values.schema.json', () => {
  it.each([CHART_DIR, OPERATOR_CHART_DIR])('of %s uses draft-07 keywords only', async (chart) => {
    const schema = JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8'));
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect([...keywords(schema)].filter((k) => !DRAFT_07.has(k))).toEqual([]);
  });

  for (const helm of Object.keys(HELMS) as HelmName[]) {
    describe(helm, () => {
      for (const { rule, values, field } of REJECTIONS) {
        it(`rejects: ${rule}`, async () => {
          const result = await helmTemplate(helm, values);
          expect(result.code).not.toBe(0);
          expect(result.stderr).toContain("values don't meet the specifications of the schema");
          expect(result.stderr).toMatch(fieldPattern(field));
          expect(result.stderr).not.toContain('do-not-print-me');
        });
      }

      it('accepts what the matrix allows', async () => {
        for (const values of [
          airGapped({ playground: { enabled: true, host: 'http://api.internal:8080' } }),
          clientHosted({
            search: { enabled: true, host: 'https://search.example.com' },
            playground: { enabled: true },
          }),
          inlineValues(LINK, {
            deploymentKind: 'cloud',
            staticExport: { version: A_VERSION },
            features: {
              search: { enabled: true },
              assistant: { enabled: true },
              analytics: { enabled: true },
            },
          }),
        ]) {
          const result = await helmTemplate(helm, values);
          expect(result.stderr).toBe('');
          expect(result.code).toBe(0);
        }
      });

      it('refuses a link that is not http(s) without printing it', async () => {
        const result = await helmTemplate(
          helm,
          inlineValues('ftp://bundles.example.com/b?sig=do-not-print-me'),
        );
        expect(result.code).not.toBe(0);
        expect(result.stderr).toContain('staticExport.bundleUrl must be the http(s) bundleUrl');
        expect(result.stderr).not.toContain('do-not-print-me');
      });
    });
  }
});
