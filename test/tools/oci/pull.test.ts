// Reading a site image back from a real registry: into a directory (fetch --oci) or only checked
// from the stream (the operator). Both apply the same checks and agree on what the image holds.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBundleError } from '../../../src/bundle/index.ts';
import { bufferSource } from '../../../src/oci/content.ts';
import { OciError } from '../../../src/oci/errors.ts';
import { pushImage, siteImage } from '../../../src/oci/image.ts';
import { packageSite } from '../../../src/oci/publish.ts';
import { inspectSiteImage, pullSiteImage } from '../../../src/oci/pull.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { rejectionOf } from '../../support/rejection.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import { startTamperingRegistry, type TamperingRegistry } from '../../support/servers/tampering-registry.ts';
import { tempDir } from '../../support/temp.ts';

let registry: TestRegistry;
let client: RegistryClient;
const work = tempDir('oci-pull-test-');

beforeAll(async () => {
  registry = await startRegistry();
  client = new RegistryClient({ registry: registry.host, retries: 0 });
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await registry?.close();
});

/** A site of `pages` pages, packaged as our image. */
async function packaged(label: string, pages: number) {
  const dir = join(work, label);
  await mkdir(join(dir, 'guide'), { recursive: true });
  await writeFile(join(dir, 'index.html'), `<h1>${label}</h1>`);
  for (let i = 1; i < pages; i++) await writeFile(join(dir, 'guide', `p${i}.html`), `<p>${label} ${i}</p>`);
  return packageSite(dir, { domain: 'docs.example.com' });
}

async function push(repository: string, image: Parameters<typeof pushImage>[2], tag: string) {
  return (await pushImage(client, repository, image, [tag])).digest;
}

const refusal = (p: Promise<unknown>) => rejectionOf(p, Error);

describe('reading a site image', () => {
  it('checks from the stream what a pull extracts: the same version and pages', async () => {
    const site = await packaged('same', 4);
    const digest = await push('docs/same', site.image, site.version);

    const inspected = await inspectSiteImage(client, 'docs/same', digest);
    expect(inspected).toMatchObject({ verified: false, summary: { version: site.version, files: 4 } });
    expect(inspected.summary.site.pages).toBe(site.pages);

    const dest = join(work, 'same-pulled');
    const { staged } = await pullSiteImage(client, 'docs/same', digest, dest);
    expect(staged.version).toBe(site.version);
    expect(staged.site.pages).toBe(site.pages);
    expect(await staged.commit()).toBe(dest);
    expect((await readdir(dest)).sort()).toContain('index.html');
  });

  it('refuses an image whose version annotation its files do not match, and leaves nothing behind', async () => {
    const real = await packaged('real', 2);
    const other = await packaged('other', 3);
    // The layer of one site under the other's version.
    const lying = siteImage(real.image.layer, {
      version: other.version,
      domain: 'docs.example.com',
      pages: 2,
    });
    const digest = await push('docs/lying', lying, other.version);
    const said = new RegExp(`says ${other.version}, its files are ${real.version}`);

    const inspected = await refusal(inspectSiteImage(client, 'docs/lying', digest));
    expect(inspected).toBeInstanceOf(OciError);
    expect((inspected as OciError).reason).toBe('InvalidImage');
    expect(inspected.message).toMatch(said);

    const parent = join(work, 'lying');
    await mkdir(parent);
    const pulled = await refusal(pullSiteImage(client, 'docs/lying', digest, join(parent, 'site')));
    expect(pulled.message).toMatch(said);
    expect(await readdir(parent)).toEqual([]);
  });

  it('refuses an image that is not one tar layer, naming what it found', async () => {
    const site = await packaged('two-layers', 2);
    const extra = bufferSource(Buffer.from('not a layer'));
    const manifest = JSON.parse(site.image.manifest.toString('utf8'));
    manifest.layers.push({ mediaType: 'application/octet-stream', digest: extra.digest, size: extra.size });
    const digest = await push(
      'docs/two',
      { blobs: [...site.image.blobs, extra], manifest: Buffer.from(JSON.stringify(manifest)) },
      'two',
    );
    const error = await refusal(inspectSiteImage(client, 'docs/two', digest));
    expect((error as OciError).reason).toBe('InvalidImage');
    expect(error.message).toMatch(/is not a site image: expected one tar layer, found .*octet-stream/);
  });

  it('applies the bundle caps to what it only checks', async () => {
    const site = await packaged('big', 5);
    const digest = await push('docs/big', site.image, site.version);
    const error = await refusal(inspectSiteImage(client, 'docs/big', digest, { limits: { maxEntries: 2 } }));
    expect(isBundleError(error)).toBe(true);
    expect(error.message).toMatch(/entries/);
  });
});

describe('a registry that alters what it serves', () => {
  let proxy: TamperingRegistry;
  let proxied: RegistryClient;
  let site: Awaited<ReturnType<typeof packaged>>;
  let digest: string;

  beforeAll(async () => {
    proxy = await startTamperingRegistry(registry.host);
    proxied = new RegistryClient({ registry: proxy.host, retries: 0 });
    site = await packaged('tampered', 3);
    digest = await push('docs/tampered', site.image, site.version);
  });

  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
  });

  const layerDigest = () => JSON.parse(site.image.manifest.toString('utf8')).layers[0].digest as string;

  it.each(['swap-byte', 'cut-short'] as const)(
    'refuses a layer whose bytes are not its digest (%s) as ContentMismatch naming it, and leaves nothing behind',
    async (blobs) => {
      proxy.tamper = { blobs };
      try {
        const checked = await refusal(inspectSiteImage(proxied, 'docs/tampered', digest));
        expect(checked).toBeInstanceOf(OciError);
        expect((checked as OciError).reason).toBe('ContentMismatch');
        expect(checked.message).toContain(layerDigest());

        const parent = join(work, `tampered-${blobs}`);
        await mkdir(parent);
        const pulled = await refusal(pullSiteImage(proxied, 'docs/tampered', digest, join(parent, 'site')));
        expect((pulled as OciError).reason).toBe('ContentMismatch');
        expect(pulled.message).toContain(layerDigest());
        expect(await readdir(parent)).toEqual([]);
      } finally {
        proxy.tamper = undefined;
      }
    },
  );

  it('refuses another manifest served for a digest as ContentMismatch naming both', async () => {
    const other = await packaged('other-manifest', 2);
    proxy.tamper = {
      manifestByDigest: {
        bytes: other.image.manifest,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
      },
    };
    try {
      const error = await refusal(inspectSiteImage(proxied, 'docs/tampered', digest));
      expect((error as OciError).reason).toBe('ContentMismatch');
      expect(error.message).toContain(digest);
      expect(error.message).not.toMatch(/\n/);
    } finally {
      proxy.tamper = undefined;
    }
  });
});
