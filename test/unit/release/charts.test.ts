// A released chart installs the image released beside it: the packaged copy's default image
// repository is the release's, its comments and every other value untouched.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { pointChartAt } from '../../../scripts/release/charts.ts';
import { annotatedImage, CHARTS } from '../../../scripts/release/versions.ts';

const ROOT = join(import.meta.dirname, '../../..');
const work = mkdtempSync(join(tmpdir(), 'release-charts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it.each(CHARTS)('%s: image.repository and the Artifact Hub image point at the released image', (chart) => {
  const dir = join(work, chart);
  cpSync(join(ROOT, 'charts', chart), dir, { recursive: true });
  pointChartAt(dir, 'registry.example.com:5000/team/static-export', '0.1.0');

  const original = readFileSync(join(ROOT, 'charts', chart, 'values.yaml'), 'utf8');
  const values = readFileSync(join(dir, 'values.yaml'), 'utf8');
  expect(parse(values)).toEqual({
    ...parse(original),
    image: { ...parse(original).image, repository: 'registry.example.com:5000/team/static-export' },
  });
  // Users read the packaged values.yaml (helm show values): its comments stay.
  expect(values).toContain("# Defaults to the chart's appVersion.");

  const meta = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as {
    annotations: Record<string, string>;
  };
  expect(annotatedImage(meta.annotations['artifacthub.io/images'])).toBe(
    'registry.example.com:5000/team/static-export:0.1.0',
  );
  const imageNames = (chartFile: string) => {
    const { annotations } = parse(readFileSync(chartFile, 'utf8')) as typeof meta;
    return (parse(annotations['artifacthub.io/images'] ?? '[]') as { name: string }[]).map((i) => i.name);
  };
  expect(imageNames(join(dir, 'Chart.yaml'))).toEqual(imageNames(join(ROOT, 'charts', chart, 'Chart.yaml')));
});
