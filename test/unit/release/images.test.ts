// The release's image list: every image the three released charts run, each once, one per line,
// the static-export image being the one released beside them.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { pointChartAt } from '../../../scripts/release/charts.ts';
import { ReleaseError } from '../../../scripts/release/errors.ts';
import { chartImages, writeImageList } from '../../../scripts/release/images.ts';
import { CHARTS } from '../../../scripts/release/versions.ts';

const ROOT = join(import.meta.dirname, '../../..');
const work = mkdtempSync(join(tmpdir(), 'release-images-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('lists the released image and every third-party image of the charts, each once', () => {
  const images = CHARTS.flatMap((chart) => {
    const dir = join(work, chart);
    cpSync(join(ROOT, 'charts', chart), dir, { recursive: true });
    pointChartAt(dir, 'registry.example.com/team/static-export', '0.1.0');
    return chartImages(dir);
  });
  const file = writeImageList(work, '0.1.0', images);
  expect(file).toBe(join(work, 'static-export-0.1.0-images.txt'));
  expect(readFileSync(file, 'utf8')).toBe(
    [
      'docker.io/library/busybox:1.37',
      'docker.io/nginxinc/nginx-unprivileged:1.29.8-alpine',
      'registry.example.com/team/static-export:0.1.0',
      '',
    ].join('\n'),
  );
});

it('refuses a chart whose annotation lists no images, naming the file and the fix', () => {
  const dir = join(work, 'bare');
  cpSync(join(ROOT, 'charts/static-export-simulator'), dir, { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: bare\nversion: 0.1.0\n');
  expect(() => chartImages(dir)).toThrow(ReleaseError);
  expect(() => chartImages(dir)).toThrow(
    `${join(dir, 'Chart.yaml')}: the artifacthub.io/images annotation lists no images; list each as {name, image}`,
  );
});
