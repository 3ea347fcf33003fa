// OCI image layout archives (`oci-layout`, `index.json`, `blobs/sha256/...` in one tar): what
// `mirror save` writes for a disk carried into the gap and `mirror load` pushes from there. The
// format `skopeo copy oci-archive:` reads and writes. Reading indexes the tar's headers and serves
// each blob as a byte range of the file: nothing is extracted or held in memory.
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TarContentSizeError, type TarItem, tarPadding, tarStream } from '../tar/writer.ts';
import { OciError } from './errors.ts';
import { isTag } from './reference.ts';
import { type BlobSource, bufferSource, type Descriptor, digestOf, MEDIA_TYPES } from './registry.ts';

/** The tag an image has inside a layout (`oci-archive:site.tar:<ref>`). */
export const REF_NAME = 'org.opencontainers.image.ref.name';

export interface LayoutImage {
  /** Manifest bytes as stored. */
  manifest: Buffer;
  manifestDigest: string;
  /** Blobs the manifest names: config first, then layers. */
  blobs: BlobSource[];
  /** `org.opencontainers.image.ref.name` of the index entry, when set. */
  refName?: string;
  annotations: Record<string, string>;
}

interface ManifestJson {
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  annotations?: Record<string, string>;
}

function parseManifest(bytes: Buffer, where: string): ManifestJson {
  let parsed: ManifestJson;
  try {
    parsed = JSON.parse(bytes.toString('utf8')) as ManifestJson;
  } catch {
    throw new OciError('InvalidImage', `${where} is not JSON`);
  }
  if (!parsed.config || !Array.isArray(parsed.layers)) {
    throw new OciError('InvalidImage', `${where} is not an image manifest (no config or layers)`);
  }
  return parsed;
}

/**
 * Writes one image into an OCI layout archive at `path` (replaced atomically), tagged `refName`
 * inside the layout. Blobs are streamed; the same image always gives the same archive bytes.
 */
export async function saveLayoutArchive(
  path: string,
  image: { manifest: Buffer; blobs: BlobSource[] },
  refName: string,
): Promise<void> {
  if (!isTag(refName))
    throw new OciError('Usage', `"${refName}" cannot name an image in a layout (use a tag)`);
  const manifest = bufferSource(image.manifest);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociIndex,
      manifests: [
        {
          mediaType: MEDIA_TYPES.ociManifest,
          digest: manifest.digest,
          size: manifest.size,
          annotations: { [REF_NAME]: refName },
        },
      ],
    }),
  );
  const layoutFile = Buffer.from('{"imageLayoutVersion":"1.0.0"}');
  const blobs = [manifest, ...image.blobs].filter(
    (blob, i, all) => all.findIndex((other) => other.digest === blob.digest) === i,
  );
  blobs.sort((a, b) => (a.digest < b.digest ? -1 : 1));

  const file = (name: string, content: Uint8Array | AsyncIterable<Uint8Array>, size: number): TarItem => ({
    path: name,
    kind: 'file',
    size,
    content,
  });
  const items: TarItem[] = [
    file('oci-layout', layoutFile, layoutFile.length),
    file('index.json', index, index.length),
    { path: 'blobs', kind: 'dir', size: 0 },
    { path: 'blobs/sha256', kind: 'dir', size: 0 },
    // Opened one at a time, as the tar reaches each blob.
    ...blobs.map((blob) =>
      file(`blobs/sha256/${blob.digest.slice('sha256:'.length)}`, lazily(blob), blob.size),
    ),
  ];
  const tmp = `${path}.partial`;
  try {
    await pipeline(Readable.from(tarStream(items)), createWriteStream(tmp));
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    // A blob that gave more or fewer bytes than its descriptor says.
    if (error instanceof TarContentSizeError)
      throw new OciError('InvalidImage', error.message, { cause: error });
    throw error;
  }
}

async function* lazily(blob: BlobSource): AsyncIterable<Uint8Array> {
  yield* blob.open() as AsyncIterable<Uint8Array>;
}

/** Where each regular file's bytes sit in a tar file. */
async function indexTar(path: string): Promise<Map<string, { offset: number; size: number }>> {
  const files = new Map<string, { offset: number; size: number }>();
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new OciError('Usage', `${path} cannot be read (${error.code ?? error.message})`);
  });
  try {
    const block = Buffer.alloc(512);
    let offset = 0;
    let longName: string | undefined;
    for (;;) {
      const { bytesRead } = await handle.read(block, 0, 512, offset);
      if (bytesRead < 512) throw new OciError('InvalidImage', `${path} is not a tar archive (truncated)`);
      if (block.every((b) => b === 0)) break;
      const text = (start: number, length: number) => {
        const raw = block.subarray(start, start + length);
        const end = raw.indexOf(0);
        return raw.subarray(0, end < 0 ? length : end).toString('utf8');
      };
      const sizeText = text(124, 12).trim();
      if (!/^[0-7]*$/.test(sizeText) || text(257, 5) !== 'ustar') {
        throw new OciError('InvalidImage', `${path} is not an (uncompressed) OCI layout archive`);
      }
      let size = Number.parseInt(sizeText || '0', 8);
      const type = text(156, 1) || '0';
      const prefix = text(345, 155);
      let name = longName ?? (prefix ? `${prefix}/${text(0, 100)}` : text(0, 100));
      const dataOffset = offset + 512;
      if (type === 'x' || type === 'L') {
        const data = Buffer.alloc(size);
        await handle.read(data, 0, size, dataOffset);
        if (type === 'L') longName = data.toString('utf8').replace(/\0.*$/s, '');
        else {
          const records = data.toString('utf8');
          const path = /\d+ path=([^\n]*)\n/.exec(records)?.[1];
          longName = path ?? longName;
        }
        offset = dataOffset + size + tarPadding(size);
        continue;
      }
      longName = undefined;
      if (type === '0' || type === '\0' || type === '7') {
        name = name.replace(/^\.\//, '');
        files.set(name, { offset: dataOffset, size });
      } else {
        size = type === '5' || type === '2' || type === '1' ? 0 : size;
      }
      offset = dataOffset + size + tarPadding(size);
    }
  } finally {
    await handle.close();
  }
  return files;
}

async function readRange(path: string, at: { offset: number; size: number }): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const data = Buffer.alloc(at.size);
    await handle.read(data, 0, at.size, at.offset);
    return data;
  } finally {
    await handle.close();
  }
}

/** The images of an OCI layout archive (image manifests only), blobs served from the file. */
export async function readLayoutArchive(path: string): Promise<LayoutImage[]> {
  const files = await indexTar(path);
  const json = async (name: string) => {
    const at = files.get(name);
    if (!at) throw new OciError('InvalidImage', `${path} has no ${name}: not an OCI image layout archive`);
    return readRange(path, at);
  };
  await json('oci-layout');
  const index = JSON.parse((await json('index.json')).toString('utf8')) as { manifests?: Descriptor[] };
  const blob = (descriptor: Descriptor, what: string): BlobSource => {
    if (!/^sha256:[0-9a-f]{64}$/.test(descriptor.digest)) {
      throw new OciError('InvalidImage', `${path}: ${what} has an unsupported digest ${descriptor.digest}`);
    }
    const at = files.get(`blobs/sha256/${descriptor.digest.slice(7)}`);
    if (!at)
      throw new OciError('InvalidImage', `${path}: ${what} ${descriptor.digest} is missing from the archive`);
    if (at.size !== descriptor.size) {
      throw new OciError(
        'InvalidImage',
        `${path}: ${what} ${descriptor.digest} has ${at.size} bytes, expected ${descriptor.size}`,
      );
    }
    return {
      digest: descriptor.digest,
      size: at.size,
      open: (offset = 0) =>
        at.size - offset === 0
          ? (async function* () {})()
          : createReadStream(path, { start: at.offset + offset, end: at.offset + at.size - 1 }),
    };
  };
  const images: LayoutImage[] = [];
  for (const entry of index.manifests ?? []) {
    if (entry.mediaType !== MEDIA_TYPES.ociManifest && entry.mediaType !== MEDIA_TYPES.dockerManifest) {
      throw new OciError(
        'InvalidImage',
        `${path}: index entry ${entry.digest} is ${entry.mediaType}; only image manifests can be loaded`,
      );
    }
    const source = blob(entry, 'manifest');
    const bytes = await readRange(
      path,
      files.get(`blobs/sha256/${entry.digest.slice(7)}`) as { offset: number; size: number },
    );
    if (digestOf(bytes) !== entry.digest) {
      throw new OciError('InvalidImage', `${path}: manifest ${entry.digest} does not match its digest`);
    }
    const manifest = parseManifest(bytes, `${path}: manifest ${entry.digest}`);
    const refName = entry.annotations?.[REF_NAME];
    images.push({
      manifest: bytes,
      manifestDigest: source.digest,
      blobs: [
        blob(manifest.config as Descriptor, 'config'),
        ...(manifest.layers ?? []).map((l) => blob(l, 'layer')),
      ],
      ...(refName ? { refName } : {}),
      annotations: manifest.annotations ?? {},
    });
  }
  if (images.length === 0) throw new OciError('InvalidImage', `${path}: index.json lists no image`);
  return images;
}
