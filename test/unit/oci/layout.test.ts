// saveLayoutArchive on its own: many-chunk blobs, blobs that lie about their size.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bufferSource } from '../../../src/oci/content.ts';
import { OciError } from '../../../src/oci/errors.ts';
import { readLayoutArchive, saveLayoutArchive } from '../../../src/oci/layout.ts';
import { tempDir } from '../../support/temp.ts';

const CHUNK = Buffer.alloc(64 * 1024, 7);

/** A blob read as `chunks` pieces of 64 KiB; `size` may lie. */
function chunkedBlob(chunks: number, size = chunks * CHUNK.length) {
  const hash = createHash('sha256');
  for (let i = 0; i < chunks; i++) hash.update(CHUNK);
  return {
    digest: `sha256:${hash.digest('hex')}`,
    size,
    async *open() {
      for (let i = 0; i < chunks; i++) yield CHUNK;
    },
  };
}

const CONFIG = bufferSource(Buffer.from('{}'));

/** The image of one layer: its manifest and blobs. */
function imageOf(layer: { digest: string; size: number; open(): AsyncIterable<Uint8Array> }) {
  const descriptor = (b: { digest: string; size: number }, mediaType: string) => ({
    mediaType,
    digest: b.digest,
    size: b.size,
  });
  const manifest = {
    schemaVersion: 2,
    config: descriptor(CONFIG, 'application/vnd.oci.image.config.v1+json'),
    layers: [descriptor(layer, 'application/vnd.oci.image.layer.v1.tar')],
  };
  return { manifest: Buffer.from(JSON.stringify(manifest)), blobs: [CONFIG, layer] };
}

describe('saveLayoutArchive', () => {
  let dir: string;
  let warnings: string[];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  beforeEach(async () => {
    dir = tempDir('layout-test-');
    warnings = [];
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('streams a blob of many chunks into the archive without a listener warning', async () => {
    const blob = chunkedBlob(40);
    const path = join(dir, 'site.tar');
    await saveLayoutArchive(path, imageOf(blob), 'v1');
    // Node reports a leak warning asynchronously: let it surface before looking.
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual([]);
    const [image] = await readLayoutArchive(path);
    expect(image?.refName).toBe('v1');
    const stored = image?.blobs.find((b) => b.digest === blob.digest);
    const read = createHash('sha256');
    for await (const chunk of stored?.open() ?? []) read.update(chunk);
    expect(`sha256:${read.digest('hex')}`).toBe(blob.digest);
  });

  it('refuses a blob shorter than its descriptor and leaves no file behind', async () => {
    const path = join(dir, 'short.tar');
    const blob = chunkedBlob(3, 3 * CHUNK.length + 1);
    const error = await saveLayoutArchive(path, imageOf(blob), 'v1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OciError);
    expect((error as OciError).reason).toBe('InvalidImage');
    expect((error as OciError).message).toMatch(/blobs\/sha256\/[0-9a-f]{64}/);
    expect(existsSync(path)).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });
});
