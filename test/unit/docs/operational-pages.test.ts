// What the troubleshooting, security and production pages state about the operator, against the
// code and the charts: every condition reason with what to do, fetch's exit codes and messages, the
// sync sidecar's report, the log lines they quote, the chart values and defaults they name, the
// Secrets rule and role aggregation, the trigger receiver's limits, the sizing figures (the latest
// benchmarks'), the CRDs an uninstall deletes and the tests the threat model cites.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BundleError, type BundleErrorReason } from '../../../src/bundle/errors.ts';
import { exitCodeFor } from '../../../src/cli/exit-codes.ts';
import { API_GROUP } from '../../../src/crd/common.ts';
import { CRD_DEFINITIONS } from '../../../src/crd/manifests.ts';
import { CONDITION_REASONS } from '../../../src/crd/reasons.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_LIST_PAGES } from '../../../src/runtime/kube-client.ts';
import { conditionFor } from '../../../src/sync/reporter.ts';
import { CONTENT_SERVED_CONDITION } from '../../../src/targets/pod-content.ts';
import {
  DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
  MAX_BODY_BYTES,
  MAX_CLOCK_SKEW_S,
} from '../../../src/trigger/contract.ts';
import { TOKEN_TTL_MS } from '../../../src/trigger/tokens.ts';
import { chartValues, hasValue } from '../../support/fixtures/doc-facts.ts';
import {
  codeSpans,
  proseLines,
  REPO,
  readRepoFile,
  repoFiles,
  sectionRows,
} from '../../support/fixtures/markdown.ts';

const TROUBLESHOOTING = readRepoFile('docs/troubleshooting.md');
const SECURITY = readRepoFile('docs/security.md');
const PRODUCTION = readRepoFile('docs/production.md');
const PAGES = {
  'docs/troubleshooting.md': TROUBLESHOOTING,
  'docs/security.md': SECURITY,
  'docs/production.md': PRODUCTION,
};

const SOURCE = repoFiles(/^src\/.*\.ts$/)
  .map(readRepoFile)
  .join('\n');
const CHARTS = ['static-export-operator', 'static-export-site'] as const;
const VALUES = Object.fromEntries(CHARTS.map((c) => [c, chartValues(c)]));

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/** The fixed parts of a quoted message (`…` where the code fills something in), long enough to mean something. */
const fixedParts = (quote: string) =>
  quote
    .split('…')
    .map((p) => p.trim())
    .filter((p) => p.length >= 8);

/** A page's prose as paragraphs, lines joined (a claim may wrap). */
const paragraphs = (text: string) =>
  proseLines(text)
    .map((l) => l.text)
    .join('\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' '));

/** Each chart value a page states a default for (`value` (15 s), `value` of 256Mi, (`value`, 8082)) that no chart has. */
function wrongDefaults(text: string): string[] {
  const found: string[] = [];
  for (const paragraph of paragraphs(text))
    for (const m of paragraph.matchAll(
      /`([a-z][\w.]*)`(?: \(| of |, )(\d[\d.]*(?: ?(?:Mi|Gi|s|m|h))?)(?: by default)?(?=[),;.\s]|$)/g,
    )) {
      const [, path = '', stated = ''] = m;
      const charts = CHARTS.filter((c) => hasValue(VALUES[c], path.split('.')[0] ?? ''));
      if (charts.length === 0) continue;
      const defaults = charts.map((c) =>
        path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], VALUES[c]),
      );
      // Seconds are written with their unit in prose (`leaseDurationSeconds` (15 s)).
      if (!defaults.some((d) => String(d) === stated.replace(/ s$/, '')))
        found.push(`${path}: ${stated} (charts: ${defaults.map(String).join(', ')})`);
    }
  return found;
}

/** The leaf paths of a values document (a list is a leaf: the chart takes it whole). */
function leafPaths(node: unknown, prefix = ''): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [prefix];
  return Object.entries(node).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}

/** The values documents of a page: YAML blocks opening with `# values for charts/<chart>`. */
function valuesBlocks(text: string): { chart: string; values: unknown }[] {
  return [...text.matchAll(/```yaml\n# values for charts\/([\w-]+)\n([\s\S]*?)```/g)].map((m) => ({
    chart: m[1] ?? '',
    values: parse(m[2] ?? ''),
  }));
}

describe('docs/troubleshooting.md', () => {
  it('says what to do for every reason the operator sets on a condition, and names no other', () => {
    const rows = sectionRows(TROUBLESHOOTING, 'Every reason, and what to do');
    expect(sorted(rows.flatMap((row) => codeSpans(row[0] ?? '')))).toEqual(sorted(CONDITION_REASONS));
    for (const row of rows) expect(row[1], `what to do for ${row[0]}`).toMatch(/\S/);
  });

  it("gives fetch's exit codes as the CLI exits, with messages the code writes", () => {
    const rows = sectionRows(TROUBLESHOOTING, "The site's pods are stuck in `Init`").filter((row) =>
      /^`\d+`$/.test(row[0] ?? ''),
    );
    expect(rows.length).toBeGreaterThan(0);
    // Each message, and the refusal the code raises with it.
    const raised: [string, BundleErrorReason][] = [
      ['the link has expired', 'Expired'],
      ['fewer than the minimum of', 'PublishGate'],
      ['bundle content is version', 'VersionMismatch'],
      ['failed after', 'Network'],
      ['did not finish within', 'Timeout'],
      ['static-export did not create', 'DestinationNotOurs'],
    ];
    for (const [quote, reason] of raised) {
      const row = rows.find((r) => (r[1] ?? '').includes(quote));
      expect(row, `a row quoting "${quote}"`).toBeDefined();
      expect(Number(codeSpans(row?.[0] ?? '')[0]), quote).toBe(exitCodeFor(new BundleError(reason, quote)));
    }
    for (const part of rows.flatMap((row) => codeSpans(row[1] ?? '').flatMap(fixedParts)))
      expect(SOURCE, `the code writes "${part}"`).toContain(part);
  });

  it("names the sync sidecar's condition and each reason it reports, and no other", () => {
    const outcomes = [
      conditionFor({ kind: 'serving', version: 'v' }),
      conditionFor({ kind: 'fetchFailed', served: 'v', version: 'w', cause: 'c' }),
      conditionFor({ kind: 'secretUnusable', served: 'v', problem: 'p' }),
    ];
    const rows = sectionRows(TROUBLESHOOTING, 'The sync sidecar does not swap');
    const documented = rows.flatMap((row) => codeSpans(row[0] ?? '').slice(0, 1));
    expect(sorted(documented)).toEqual(sorted(outcomes.map((c) => c.reason)));
    expect(TROUBLESHOOTING).toContain(CONTENT_SERVED_CONDITION);
  });

  it('quotes log lines the operator and the CLI write', () => {
    const quoted = [
      'became leader',
      'lost leadership; stopped reconciling',
      'released the lease',
      'bundle download interrupted, retrying',
      'needs patch on pods/status',
      'not running: nobody holds the',
    ];
    for (const line of quoted) {
      expect(TROUBLESHOOTING, 'the page quotes it').toContain(line);
      expect(SOURCE, 'the code writes it').toContain(line);
    }
  });
});

describe('docs/security.md', () => {
  it("states the operator's Secrets rule as the chart grants it", () => {
    const helpers = readRepoFile('charts/static-export-operator/templates/_helpers.tpl');
    const granted = /resources: \[secrets\]\n\s*verbs: \[([^\]]+)\]/.exec(helpers)?.[1]?.split(/,\s*/) ?? [];
    const row = sectionRows(SECURITY, 'What the operator can read and change').find(
      (r) => codeSpans(r[0] ?? '')[0] === 'secrets',
    );
    expect(row?.[1]?.split(/,\s*/)).toEqual(granted);
  });

  it('says into which built-in roles each user role is aggregated, as the chart labels them', () => {
    const roles = readRepoFile('charts/static-export-operator/templates/user-roles.yaml');
    for (const suffix of ['view', 'edit']) {
      const role =
        new RegExp(`name: \\{\\{ \\$name \\}\\}-${suffix}\\n[\\s\\S]*?rules:`).exec(roles)?.[0] ?? '';
      const labelled = [...role.matchAll(/aggregate-to-(\w+): "true"/g)].map((m) => m[1] ?? '');
      const stated = new RegExp(
        `\`<fullname>-${suffix}\` \\([^)]*\\) into ((?:\`\\w+\`(?:, | and )?)+)`,
      ).exec(paragraphs(SECURITY).join('\n'))?.[1];
      expect(sorted(codeSpans(stated ?? '')), suffix).toEqual(sorted(labelled));
    }
  });

  it("gives the trigger receiver's limits as the code sets them", () => {
    const text = paragraphs(SECURITY).join('\n');
    expect(Number(/more than (\d+) minutes off/.exec(text)?.[1])).toBe(MAX_CLOCK_SKEW_S / 60);
    expect(Number(/over (\d+) KiB/.exec(text)?.[1])).toBe(MAX_BODY_BYTES / 1024);
    expect(Number(/one token read every (\d+) seconds/.exec(text)?.[1])).toBe(TOKEN_TTL_MS / 1000);
    expect(Number(/`trigger\.requestsPerMinute` \((\d+)\)/.exec(text)?.[1])).toBe(
      DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
    );
  });

  it("gives the Kubernetes client's read bounds as the code sets them", () => {
    const row = sectionRows(SECURITY, 'Threat model: what the tests attack').find((r) =>
      (r[0] ?? '').includes('Kubernetes API server'),
    );
    const text = row?.[2] ?? '';
    expect(Number(/(\d+) MiB per answer/.exec(text)?.[1])).toBe(DEFAULT_MAX_RESPONSE_BYTES / 2 ** 20);
    expect(Number(/(\d+) pages per list/.exec(text)?.[1])).toBe(MAX_LIST_PAGES);
  });

  it('cites tests that exist for each threat', () => {
    const rows = sectionRows(SECURITY, 'Threat model: what the tests attack');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const tests = codeSpans(row[3] ?? '');
      expect(tests.length, `tests for ${row[0]}`).toBeGreaterThan(0);
      for (const test of tests) expect(existsSync(join(REPO, test)), test).toBe(true);
    }
  });
});

describe('docs/production.md', () => {
  it("lists each chart's values under its own heading", () => {
    for (const [heading, chart] of [
      ['The operator chart', 'static-export-operator'],
      ['The site chart', 'static-export-site'],
    ] as const) {
      const named = sectionRows(PRODUCTION, heading).flatMap((row) => codeSpans(row[0] ?? ''));
      expect(named.length).toBeGreaterThan(0);
      expect(
        named.filter((path) => !hasValue(VALUES[chart], path)),
        heading,
      ).toEqual([]);
    }
  });

  it('gives values files whose every value the chart has', () => {
    const blocks = valuesBlocks(PRODUCTION);
    expect(sorted(blocks.map((b) => b.chart))).toEqual(sorted(CHARTS));
    for (const { chart, values } of blocks)
      expect(
        leafPaths(values).filter((path) => !hasValue(chartValues(chart), path)),
        chart,
      ).toEqual([]);
  });

  it('sizes with the latest benchmark figures, and derives the per-1,000 figure from them', () => {
    const latest = sectionRows(readRepoFile('docs/benchmarks/index.md'), 'Latest figures')
      .map((row) => row.join(' | '))
      .join('\n');
    const text = paragraphs(PRODUCTION).join('\n');
    const figure = (pattern: RegExp) => Number(pattern.exec(text)?.[1]);
    const idle = figure(/about (\d+) MB with 10 releases/);
    const thousand = figure(/(\d+) MB at the peak of making 1,000 releases/);
    const threeThousand = figure(/(\d+) MB for 3,000/);
    for (const measured of [`${idle} MB`, `${thousand} MB`, `${threeThousand} MB`])
      expect(latest, `the benchmarks show ${measured}`).toContain(measured);
    expect(figure(/about (\d+) MB more per further 1,000/)).toBe(Math.round((threeThousand - thousand) / 2));
    for (const mib of [...text.matchAll(/(\d+) MiB (?:at most )?for (?:a )?[\d,]+/g)].map(
      (m) => `${m[1]} MiB`,
    ))
      expect(latest, `the benchmarks show ${mib}`).toContain(mib);
  });

  it('deletes every CRD the operator installs when removing everything', () => {
    const crds = CRD_DEFINITIONS.map((d) => `${d.plural}.${API_GROUP}`);
    const deletes = [...PRODUCTION.matchAll(/kubectl delete crd ([^`\n]+)/g)].map((m) =>
      m[1]?.trim().split(/\s+/),
    );
    expect(deletes.length).toBeGreaterThan(0);
    for (const names of deletes) expect(sorted(names ?? [])).toEqual(sorted(crds));
  });
});

describe('chart defaults stated on the operational pages', () => {
  it.each(Object.keys(PAGES))('%s states each default as the charts have it', (page) => {
    expect(wrongDefaults(PAGES[page as keyof typeof PAGES])).toEqual([]);
  });

  it('reports a default that differs, across a line break too', () => {
    expect(
      wrongDefaults(
        'the Lease (`leaderElection.leaseDurationSeconds` (20 s)) and the volume\n(`tmpVolumeSizeLimit`, 32Mi); `workDir.sizeLimit` of 64Mi; `spec.interval` (24h)',
      ),
    ).toEqual([
      'leaderElection.leaseDurationSeconds: 20 s (charts: 15)',
      'tmpVolumeSizeLimit: 32Mi (charts: 64Mi)',
    ]);
  });
});
