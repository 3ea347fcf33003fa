// Every image the three charts run, as the real Helm 4 and Helm 3 binaries render them: one value
// (global.imageRegistry) moves all of them to a private registry, and each chart's
// artifacthub.io/images annotation (what a release mirrors into an air gap) lists exactly them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, HELMS, type HelmName, helmTemplate, merge } from '../../support/tools/chart.ts';
import { CHART_VALUES, imagesOf, LINK } from '../../support/tools/chart-images.ts';

const MIRROR = 'mirror.internal:5000/platform';
const DIGEST = `sha256:${'e'.repeat(64)}`;

async function rendered(helm: HelmName, dir: string, values: object): Promise<string[]> {
  const result = await helmTemplate(helm, values, 'docs', { chart: dir });
  expect(result.code, result.stderr).toBe(0);
  return imagesOf(result.objects);
}

/** What `skopeo copy docker://IMAGE docker://MIRROR/…` keeps: the path after the registry host. */
const mirrored = (image: string) => `${MIRROR}/${image.replace(/^[^/]*[.:][^/]*\//, '')}`;

describe.each(Object.keys(HELMS) as HelmName[])('%s', (helm) => {
  describe.each(Object.entries(CHART_VALUES))('%s', (_chart, { dir, values }) => {
    it.each(values.map((v, i) => [i, v] as const))(
      'values set %i: global.imageRegistry moves every image there, the path kept',
      async (_i, v) => {
        const own = await rendered(helm, dir, v);
        expect(own.length).toBeGreaterThan(0);
        const moved = await rendered(helm, dir, merge(v, { global: { imageRegistry: MIRROR } }));
        expect(moved).toEqual(own.map(mirrored));
        for (const image of moved) expect(image.startsWith(`${MIRROR}/`), image).toBe(true);
      },
    );
  });

  it('keeps digests, and moves an image named without a registry host under the registry too', async () => {
    const images = await rendered(helm, CHART_DIR, {
      global: { imageRegistry: 'localhost:5000' },
      staticExport: { enabled: true, bundleUrl: LINK },
      image: { digest: DIGEST },
      nginx: { image: { repository: 'localhost:5001/web/nginx', digest: DIGEST } },
      tests: { enabled: true, image: { repository: 'busybox' } },
    });
    expect(images.sort()).toEqual(
      [
        `localhost:5000/static-export-operator/static-export@${DIGEST}`,
        `localhost:5000/web/nginx@${DIGEST}`,
        'localhost:5000/busybox:1.37',
      ].sort(),
    );
  });

  it("leaves the site image a release names in full (staticExport.oci.reference): it is in the gap's registry already", async () => {
    const reference = `registry.internal:5000/docs/site@${DIGEST}`;
    const images = await rendered(helm, CHART_DIR, {
      global: { imageRegistry: MIRROR },
      staticExport: { enabled: true, oci: { reference, imageVolume: true } },
    });
    expect(images).toContain(reference);
    expect(images.filter((i) => i !== reference).every((i) => i.startsWith(`${MIRROR}/`))).toBe(true);
  });

  it('refuses a registry given as a URL or with a tag, naming the value', async () => {
    for (const imageRegistry of ['https://mirror.internal', 'mirror.internal/team:1', 'Mirror.Internal']) {
      const result = await helmTemplate(
        helm,
        { global: { imageRegistry }, staticExport: { enabled: true, bundleUrl: LINK } },
        'docs',
      );
      expect(result.code).not.toBe(0);
      // Helm 4 names it /global/imageRegistry, Helm 3 global.imageRegistry.
      expect(result.stderr).toMatch(/global[./]imageRegistry/);
    }
  });
});

describe('the images a release needs', () => {
  it.each(Object.entries(CHART_VALUES))(
    '%s: its artifacthub.io/images annotation lists exactly the images it renders',
    async (_chart, { dir, values }) => {
      const chart = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as {
        annotations: Record<string, string>;
      };
      const annotated = (
        parse(chart.annotations['artifacthub.io/images'] ?? '[]') as { image: string }[]
      ).map((i) => i.image);
      const images = new Set<string>();
      for (const v of values) for (const image of await rendered('helm4', dir, v)) images.add(image);
      expect([...annotated].sort()).toEqual([...images].sort());
    },
  );

  it('each chart resolves image references with the same helper (one rule for every image)', () => {
    const helper = (dir: string) => {
      const text = readFileSync(join(dir, 'templates/_helpers.tpl'), 'utf8');
      const block =
        /\{\{\/\*\nAn image reference:[\s\S]*?\n\{\{- define "[a-z]+\.imageRef" -\}\}[\s\S]*?\n\{\{- end -\}\}\n\{\{- end -\}\}/.exec(
          text,
        );
      expect(block, `${dir}/templates/_helpers.tpl defines no imageRef helper`).not.toBeNull();
      return block?.[0].replace(/define "[a-z]+\.imageRef"/, 'define "imageRef"');
    };
    const [first, ...others] = Object.values(CHART_VALUES).map((c) => helper(c.dir));
    for (const other of others) expect(other).toBe(first);
  });
});
