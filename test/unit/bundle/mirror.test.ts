import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleError } from '../../../src/bundle/errors.ts';
import { fetchBundle } from '../../../src/bundle/fetch.ts';
import { mirrorBundle, readMirrorIndex } from '../../../src/bundle/mirror.ts';
import { DEFAULT_DOCS_DIR, type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';

let sim: Simulator;
let work: string;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 0 });
  work = await mkdtemp(join(tmpdir(), 'mirror-test-'));
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

describe('mirrorBundle', () => {
  it('files bundles by content version with manifests and an index, never the link', async () => {
    const mirror = join(work, 'mirror');
    const domain = 'docs.example.com';
    const first = await exportBundle(sim, domain);
    const a = await mirrorBundle({
      url: first.bundleUrl,
      dir: mirror,
      domain,
      expectedSize: first.sizeBytes,
    });
    expect(a.archivePath).toBe(join(mirror, domain, a.version, 'bundle.tar.gz'));
    expect(a.sizeBytes).toBe(first.sizeBytes);

    // A re-export of the same content lands on the same version: still one entry.
    const again = await exportBundle(sim, domain);
    const b = await mirrorBundle({ url: again.bundleUrl, dir: mirror, domain });
    expect(b.version).toBe(a.version);
    expect((await readMirrorIndex(mirror, domain))?.versions).toHaveLength(1);

    // Changed docs give a new version that becomes the latest.
    const docs = join(work, 'docs');
    await cp(DEFAULT_DOCS_DIR, docs, { recursive: true });
    await writeFile(join(docs, 'index.md'), '# Changed\n\nNew content.\n');
    sim.configure({ docsDir: docs });
    const changed = await exportBundle(sim, domain);
    const c = await mirrorBundle({ url: changed.bundleUrl, dir: mirror, domain });
    expect(c.version).not.toBe(a.version);
    const index = await readMirrorIndex(mirror, domain);
    expect(index?.latest).toBe(c.version);
    expect(index?.versions.map((v) => v.version)).toEqual([a.version, c.version]);

    const entries = (await readdir(join(mirror, domain))).sort();
    expect(entries).toEqual([a.version, c.version, 'index.json'].sort());
    const manifest = await readFile(join(mirror, domain, c.version, 'manifest.json'), 'utf8');
    expect(JSON.parse(manifest)).toMatchObject({ domain, version: c.version, sha256: c.sha256 });
    for (const text of [manifest, await readFile(join(mirror, domain, 'index.json'), 'utf8')]) {
      expect(text).not.toContain(sim.baseUrl);
      expect(text).not.toContain('sig=');
    }

    // The mirrored archive serves an air-gapped fetch through a file: URL.
    const fetched = await fetchBundle({
      url: pathToFileURL(c.archivePath).toString(),
      dest: join(work, 'site'),
      expectSha256: c.sha256,
    });
    expect(fetched.version).toBe(c.version);
  });

  it('refuses a domain that is not a bare host', async () => {
    const bundle = await exportBundle(sim);
    const error = await mirrorBundle({
      url: bundle.bundleUrl,
      dir: join(work, 'm2'),
      domain: '../escape',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toContain('bare lowercase host name');
  });
});
