// The site layer built while a bundle streams in (mirror push of a bundle) against the layer built
// from the extracted site, and its upload to a real Distribution registry: committed only after
// the download's checks and the gate, dropped otherwise.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDownload } from '../../../src/bundle/download.ts';
import { BundleError } from '../../../src/bundle/errors.ts';
import { extractTarGz, unpackWith } from '../../../src/bundle/extract.ts';
import { DEFAULT_LIMITS } from '../../../src/bundle/limits.ts';
import { summarizeSite } from '../../../src/bundle/site-check.ts';
import { LayerWriter, stageBundleImage } from '../../../src/oci/bundle-layer.ts';
import { siteLayer } from '../../../src/oci/layer.ts';
import { publishSite } from '../../../src/oci/publish.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { type TarEntrySpec, tarGz } from '../../support/fixtures/tar-fixtures.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';

/** A site as the platform archives it: every directory first (some only implied), then the files, sorted. */
function orderedEntries(): TarEntrySpec[] {
  const files: TarEntrySpec[] = [
    { path: '404.html', content: '<h1>Not found</h1>' },
    { path: 'a-b.html', content: '<p>sorts between a and a/</p>' },
    { path: 'a/x.html', content: '<p>x</p>' },
    { path: 'assets/big.bin', content: Buffer.alloc(300_000, 7) },
    { path: 'assets/empty.txt', content: '' },
    { path: 'guide/start.html', content: '<h1>Start</h1>' },
    { path: 'index.html', content: '<h1>Home</h1>' },
    { path: 'ref/api/v1/deep/page.html', content: '<p>deep</p>' },
    { path: 'start.html', type: 'symlink', linkpath: 'guide/start.html' },
  ];
  files.sort((x, y) => (x.path < y.path ? -1 : 1));
  // `a` and `empty-dir` are named; the directories of ref/api/v1/deep only implied by its path.
  const dirs: TarEntrySpec[] = ['a/', 'assets/', 'empty-dir/', 'guide/'].map((path) => ({
    path,
    type: 'dir',
  }));
  return [...dirs, ...files];
}

let work: string;
let registry: TestRegistry;
let client: RegistryClient;
let server: Server;
let serverUrl: string;
const served = new Map<string, Buffer>();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'bundle-layer-test-'));
  registry = await startRegistry();
  client = new RegistryClient({ registry: registry.host, retries: 0 });
  server = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await registry?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs an archive through the layer writer: the layer bytes, or why it stopped. */
async function streamLayer(archive: Buffer) {
  const writer = new LayerWriter();
  const chunks: Buffer[] = [];
  writer.output.on('data', (chunk: Buffer) => chunks.push(chunk));
  try {
    await unpackWith(Readable.from([archive]), writer, DEFAULT_LIMITS);
  } catch (error) {
    return { writer, error };
  }
  const layer = await writer.finish();
  return { writer, layer, bytes: Buffer.concat(chunks) };
}

async function readAll(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('LayerWriter', () => {
  it('gives the bytes, digest, content version and page count of the layer built from the extracted site', async () => {
    const archive = tarGz(orderedEntries());
    const streamed = await streamLayer(archive);
    expect(streamed.error).toBeUndefined();
    const dir = join(work, 'extracted');
    const extracted = await extractTarGz(Readable.from([archive]), dir);
    const fromDisk = await siteLayer(dir);
    const diskBytes = await readAll(fromDisk.open());
    expect(streamed.bytes?.equals(diskBytes)).toBe(true);
    expect(streamed.layer).toEqual({
      digest: fromDisk.digest,
      size: fromDisk.size,
      files: fromDisk.files,
      contentBytes: fromDisk.contentBytes,
      version: extracted.version,
      site: await summarizeSite(dir),
    });
    expect(streamed.layer?.site).toEqual({ pages: 5, hasIndex: true });
    expect(streamed.layer?.files).toBe(8);
  });

  it.each([
    ['a file sorting before one already written', [{ path: 'b.html' }, { path: 'a.html' }]],
    ['a directory named after an entry sorting after it', [{ path: 'b.html' }, { path: 'a/', type: 'dir' }]],
    [
      'a directory implied only after a name that sorts after it',
      [{ path: 'a-b.html' }, { path: 'a/x.html' }],
    ],
    ['a path given twice', [{ path: 'a.html' }, { path: 'a.html' }]],
    ['a hard link', [{ path: 'a.html' }, { path: 'b.html', type: 'hardlink', linkpath: 'a.html' }]],
  ] as [string, TarEntrySpec[]][])('stops at %s: the caller extracts instead', async (_, entries) => {
    const { writer, error } = await streamLayer(tarGz(entries.map((e) => ({ content: '<p>x</p>', ...e }))));
    expect(error).toBeInstanceOf(BundleError);
    expect(writer.unordered).toBe(true);
  });

  it('refuses an unsafe entry as the extraction does, not as a matter of order', async () => {
    const { writer, error } = await streamLayer(tarGz([{ path: '../evil.html', content: 'x' }]));
    expect(error).toMatchObject({ reason: 'UnsafeEntry' });
    expect(writer.unordered).toBe(false);
  });
});

describe('stageBundleImage', () => {
  const meta = { domain: 'docs.example.com', created: '2026-01-02T03:04:05.000Z' };

  async function stage(
    archive: Buffer,
    name: string,
    extra: { expectedSize?: number; gate?: () => void } = {},
  ) {
    const path = `/${name}.tar.gz`;
    served.set(path, archive);
    return stageBundleImage({
      download: openDownload({
        url: `${serverUrl}${path}`,
        retries: 0,
        ...(extra.expectedSize === undefined ? {} : { expectedSize: extra.expectedSize }),
      }),
      client,
      repository: `staged/${name}`,
      limits: DEFAULT_LIMITS,
      meta,
      ...(extra.gate ? { gate: extra.gate } : {}),
    });
  }

  it('pushes the image the extracted site gives, the layer uploaded while the bundle downloaded', async () => {
    const archive = tarGz(orderedEntries());
    const staged = await stage(archive, 'good');
    expect(staged).toBeDefined();
    const result = await publishSite(client, 'staged/good', staged as NonNullable<typeof staged>);
    await staged?.release();
    expect(result.blobs.map((b) => b.outcome)).toEqual(['uploaded', 'uploaded']);
    const archivePath = join(work, 'good.tar.gz');
    await writeFile(archivePath, archive);
    // The same bundle through extraction (a file: URL) gives the same manifest.
    const { fetchBundle } = await import('../../../src/bundle/fetch.ts');
    const { packageSite } = await import('../../../src/oci/publish.ts');
    const fetched = await fetchBundle({
      url: pathToFileURL(archivePath).toString(),
      dest: join(work, 'good'),
    });
    const packaged = await packageSite(fetched.path, meta, {
      version: fetched.version,
      pages: fetched.site.pages,
    });
    expect(result.digest).toBe(packaged.image.manifestDigest);
    expect(await client.blobSize('staged/good', packaged.image.layer.digest)).toBe(packaged.image.layer.size);
  });

  it('commits nothing when the download fails its checks or the site fails the gate', async () => {
    const archive = tarGz(orderedEntries());
    const layerDigest = (await streamLayer(archive)).layer?.digest as string;
    await expect(stage(archive, 'short', { expectedSize: archive.length + 1 })).rejects.toMatchObject({
      reason: 'SizeMismatch',
    });
    expect(await client.blobSize('staged/short', layerDigest)).toBeUndefined();
    const refusal = new BundleError('PublishGate', 'too few pages');
    await expect(
      stage(archive, 'gated', {
        gate: () => {
          throw refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect(await client.blobSize('staged/gated', layerDigest)).toBeUndefined();
  });

  it('says undefined for entries out of the layer order (the caller extracts instead)', async () => {
    const entries = [...orderedEntries()].reverse().filter((e) => e.type !== 'dir');
    expect(await stage(tarGz(entries), 'unordered')).toBeUndefined();
  });

  it('drops the upload of a version the repository has already', async () => {
    const archive = tarGz(orderedEntries());
    const first = await stage(archive, 'again');
    await publishSite(client, 'staged/again', first as NonNullable<typeof first>);
    await first?.release();
    const second = await stage(archive, 'again');
    const result = await publishSite(client, 'staged/again', second as NonNullable<typeof second>);
    await second?.release();
    expect(result).toMatchObject({ pushed: false, blobs: [] });
  });
});
