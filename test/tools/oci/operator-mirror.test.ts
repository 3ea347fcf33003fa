// docs/air-gap.md's "Installing the operator in an air gap", with the real tools: the image list
// a release writes, copied by the page's own skopeo loop from an "outside" Distribution registry
// (standing in for ghcr.io and docker.io: the same paths) into an "inside" one; the charts pushed
// there; every image the charts then render with global.imageRegistry is in the inside registry,
// with its digest unchanged.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chartImages, writeImageList } from '../../../scripts/release/images.ts';
import { CHARTS, releaseVersion } from '../../../scripts/release/versions.ts';
import { runProcess } from '../../../scripts/run-process.ts';
import { readRepoFile } from '../../support/fixtures/markdown.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import { helm, parseManifests, ROOT, valuesFile } from '../../support/tools/chart.ts';
import { CHART_VALUES, imagesOf } from '../../support/tools/chart-images.ts';
import { runCli } from '../../support/tools/run-cli.ts';

const VERSION = releaseVersion(ROOT);
const work = mkdtempSync(join(tmpdir(), 'operator-mirror-'));
let outside: TestRegistry;
let inside: TestRegistry;
/** A registries.conf marking both loopback registries plain http (skopeo 1.9 ignores CONTAINERS_REGISTRIES_CONF). */
let registriesConf: string;

beforeAll(async () => {
  [outside, inside] = await Promise.all([startRegistry(), startRegistry()]);
  registriesConf = join(work, 'registries.conf');
  writeFileSync(
    registriesConf,
    [outside, inside].map((r) => `[[registry]]\nlocation = "${r.host}"\ninsecure = true\n`).join('\n'),
  );
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([outside?.close(), inside?.close()]);
  rmSync(work, { recursive: true, force: true });
});

/** The page's shell loop that copies the listed images, exactly as written there. */
function documentedCopyLoop(): string {
  const page = readRepoFile('docs/air-gap.md');
  const loop = /^while read -r image; do\n[\s\S]*?\ndone < .*$/m.exec(page)?.[0];
  if (!loop) throw new Error('docs/air-gap.md has no `while read -r image; do … done <` loop');
  return loop;
}

const skopeo = (args: string[]) => runProcess('skopeo', ['--registries-conf', registriesConf, ...args]);

async function digestOf(image: string): Promise<string> {
  const inspected = await skopeo(['inspect', '--format', '{{.Digest}}', `docker://${image}`]);
  expect(inspected.code, `${image}: ${inspected.stderr}`).toBe(0);
  return inspected.stdout.trim();
}

it('the listed images copied by the documented loop are every image the charts run with global.imageRegistry', {
  timeout: 300_000,
}, async () => {
  // Outside: each image of the release's list, under its upstream path (one stand-in image).
  const upstream = (image: string) => image.replace(/^[^/]+/, outside.host);
  const listed = CHARTS.flatMap((chart) => chartImages(join(ROOT, 'charts', chart))).map(upstream);
  const site = join(work, 'site');
  mkdirSync(site);
  writeFileSync(join(site, 'index.html'), '<h1>stand-in</h1>\n');
  const standIn = `${outside.host}/stand-in/image`;
  const pushed = await runCli([
    ...['mirror', 'push', '--site', site, '--to', `oci://${standIn}`, '--domain', 'docs.example.com'],
    ...['--tag', 'latest'],
  ]);
  expect(pushed.code, pushed.stderr).toBe(0);
  for (const image of new Set(listed)) {
    const copied = await skopeo(['copy', `docker://${standIn}:latest`, `docker://${image}`]);
    expect(copied.code, copied.stderr).toBe(0);
  }
  writeImageList(work, VERSION, listed);

  // The page's loop, run by bash in the directory holding the list; skopeo told that the test
  // registries speak plain http.
  const plainHttp = `skopeo() { command skopeo --registries-conf "${registriesConf}" "$@"; }`;
  const loop = await runProcess('bash', ['-euc', `${plainHttp}\n${documentedCopyLoop()}`], {
    cwd: work,
    env: { ...process.env, VERSION, MIRROR: inside.host },
  });
  expect(loop.code, loop.stderr).toBe(0);

  // The charts beside them, as the page pushes them (plain http: a loopback test registry).
  const charts = join(work, 'charts');
  for (const chart of CHARTS) {
    const packaged = await helm('helm4', ['package', join(ROOT, 'charts', chart), '--destination', charts]);
    expect(packaged.code, packaged.stderr).toBe(0);
    const push = await helm('helm4', [
      ...['push', join(charts, `${chart}-${VERSION}.tgz`)],
      ...[`oci://${inside.host}/static-export-operator`, '--plain-http'],
    ]);
    expect(push.code, push.stderr).toBe(0);
  }

  // Inside: each chart from the inside registry, every template rendered, every image there.
  const rendered = new Set<string>();
  for (const [chart, { values }] of Object.entries(CHART_VALUES)) {
    for (const v of values) {
      const template = await helm('helm4', [
        ...['template', 'docs', `oci://${inside.host}/static-export-operator/${chart}`],
        ...['--version', VERSION, '--plain-http', '--set', `global.imageRegistry=${inside.host}`],
        ...['-f', await valuesFile(v)],
      ]);
      expect(template.code, `${chart}: ${template.stderr}`).toBe(0);
      for (const image of imagesOf(parseManifests(template.stdout))) rendered.add(image);
    }
  }
  // Nothing listed that the charts do not run, nothing run that is not listed.
  expect(new Set([...rendered].map((i) => i.replace(inside.host, outside.host)))).toEqual(new Set(listed));
  for (const image of rendered) {
    expect(image.startsWith(`${inside.host}/`), image).toBe(true);
    const original = image.replace(inside.host, outside.host);
    expect(await digestOf(image)).toBe(await digestOf(original));
  }
});
