// Reading one site image back (what follows a registry inside the gap: the operator and the site
// chart's `fetch --oci`): its manifest, its cosign signature when a key is given, and its one tar
// layer, extracted (or only checked) under the bundle caps. Its version annotation, when present, must match its files.
import { Readable } from 'node:stream';
import {
  type ArchiveSummary,
  type BundleLimits,
  inspectArchive,
  isBundleError,
  type StagedExtraction,
  stageExtraction,
} from '../bundle/index.ts';
import { OciError } from './errors.ts';
import { ANNOTATIONS } from './image.ts';
import type { RegistryClient } from './registry.ts';
import { verifyManifest } from './sign.ts';

/** Layer media types a site image may use, and whether each is gzip-compressed. */
const LAYER_TYPES: Record<string, boolean> = {
  'application/vnd.oci.image.layer.v1.tar': false,
  'application/vnd.docker.image.rootfs.diff.tar': false,
  'application/vnd.oci.image.layer.v1.tar+gzip': true,
  'application/vnd.docker.image.rootfs.diff.tar.gzip': true,
};

interface PullSiteOptions {
  /** PEM public key: refuse the image unless a cosign signature by it covers the digest. */
  publicKey?: string | Buffer;
  /** Where the key came from, named when it is no public key (a flag or spec field). */
  publicKeyField?: string;
  limits?: Partial<BundleLimits>;
  /** Replace `dest` even when static-export did not create it. */
  force?: boolean;
  /** Stops the pull (its requests and the layer's transfer) when its work is no longer wanted. */
  signal?: AbortSignal | undefined;
}

interface PulledImage {
  /** The extraction, not yet at `dest`: commit or discard it. */
  staged: StagedExtraction;
  verified: boolean;
}

interface InspectedImage {
  /** What the layer holds (checked as an extraction would be, nothing written). */
  summary: ArchiveSummary;
  verified: boolean;
}

/** Pulls `repository@digest` into a staging directory beside `dest` (see stageExtraction). */
export async function pullSiteImage(
  client: RegistryClient,
  repository: string,
  digest: string,
  dest: string,
  options: PullSiteOptions = {},
): Promise<PulledImage> {
  const staged = await readSiteLayer(
    client,
    repository,
    digest,
    options,
    (blob, uncompressed) =>
      stageExtraction(blob, dest, {
        uncompressed,
        ...(options.force ? { force: true } : {}),
        ...(options.limits ? { limits: options.limits } : {}),
      }),
    (refused) => refused.discard(),
  );
  return { staged, verified: options.publicKey !== undefined };
}

/**
 * Checks `repository@digest` as `pullSiteImage` does (signature, one layer, the bundle caps, the
 * version annotation) from the stream alone: for the operator, which publishes the reference and
 * never serves the files itself.
 */
export async function inspectSiteImage(
  client: RegistryClient,
  repository: string,
  digest: string,
  options: Omit<PullSiteOptions, 'force'> = {},
): Promise<InspectedImage> {
  const summary = await readSiteLayer(client, repository, digest, options, (blob, uncompressed) =>
    inspectArchive(blob, { uncompressed, ...(options.limits ? { limits: options.limits } : {}) }),
  );
  return { summary, verified: options.publicKey !== undefined };
}

/**
 * `read` of the blob, whose digest check comes only at its end. When `read` finds the archive
 * broken first (a byte swapped on the way breaks the gzip stream long before the end), the rest
 * of the blob still goes through the check, so a layer altered on the way is reported as such
 * (ContentMismatch, naming its digest) rather than as a broken archive.
 */
async function readVerified<T>(blob: Readable, read: (view: Readable) => Promise<T>): Promise<T> {
  // The reader's failure must not end the blob itself: its iterator leaves it open.
  const view = Readable.from(blob.iterator({ destroyOnReturn: false }), { objectMode: false });
  try {
    return await read(view);
  } catch (error) {
    if (isBundleError(error) && error.reason === 'Corrupt') {
      try {
        for await (const _ of blob) {
          // only counted and hashed
        }
      } catch (mismatch) {
        if (mismatch instanceof OciError) throw mismatch;
      }
    }
    blob.destroy();
    throw blob.errored instanceof OciError ? blob.errored : error;
  }
}

/**
 * The manifest of `repository@digest`, its signature when a key is given, and its one tar layer
 * handed to `read`; what `read` found must match the image's version annotation (else `refuse`
 * undoes it and the image is InvalidImage).
 */
async function readSiteLayer<T extends { version: string }>(
  client: RegistryClient,
  repository: string,
  digest: string,
  options: PullSiteOptions,
  read: (blob: Readable, uncompressed: boolean) => Promise<T>,
  refuse: (found: T) => Promise<void> = async () => {},
): Promise<T> {
  const where = `${client.registry}/${repository}@${digest}`;
  const { signal } = options;
  const manifest = await client.getManifest(repository, digest, signal);
  if (!manifest) throw new OciError('NotFound', `manifest ${where} does not exist`);
  if (options.publicKey !== undefined) {
    try {
      await verifyManifest(client, repository, digest, options.publicKey, signal);
    } catch (e) {
      if (e instanceof OciError && e.reason === 'Usage' && options.publicKeyField)
        throw new OciError('Usage', `${options.publicKeyField}: ${e.message}`);
      throw e;
    }
  }
  let parsed: {
    layers?: { mediaType?: string; digest?: string; size?: number }[];
    annotations?: Record<string, string>;
  };
  try {
    parsed = JSON.parse(manifest.bytes.toString('utf8'));
  } catch {
    throw new OciError('InvalidImage', `${where}: the manifest is not JSON`);
  }
  const layers = parsed.layers ?? [];
  const layer = layers[0];
  const gzip = layer?.mediaType === undefined ? undefined : LAYER_TYPES[layer.mediaType];
  if (layers.length !== 1 || !layer?.digest || gzip === undefined) {
    throw new OciError(
      'InvalidImage',
      `${where} is not a site image: expected one tar layer, found ${layers.map((l) => l.mediaType).join(', ') || 'none'}`,
    );
  }
  const size = Number.isSafeInteger(layer.size) && (layer.size ?? -1) >= 0 ? layer.size : undefined;
  const blob = await client.getBlob(repository, layer.digest, size, signal);
  const found = await readVerified(blob, (view) => read(view, !gzip));
  const claimed = parsed.annotations?.[ANNOTATIONS.version];
  if (claimed !== undefined && claimed !== found.version) {
    await refuse(found);
    throw new OciError(
      'InvalidImage',
      `${where}: its annotation ${ANNOTATIONS.version} says ${claimed}, its files are ${found.version}`,
    );
  }
  return found;
}
