// One site version = one OCI image: the site layer, a config and a manifest whose bytes depend only
// on the content and the metadata given (JSON with a fixed key order, annotations sorted), so the
// same content and metadata always give the same manifest digest.
import { isContentVersion } from '../bundle/version.ts';
import { type BlobSource, bufferSource, type Descriptor, digestOf, MEDIA_TYPES } from './content.ts';
import { OciError } from './errors.ts';
import type { SiteLayer } from './layer.ts';
import type { RegistryClient } from './registry.ts';

/** Annotation keys of our own (the OCI ones are org.opencontainers.image.*). */
export const ANNOTATIONS = {
  version: 'staticexport.dev/version',
  domain: 'staticexport.dev/domain',
  projectId: 'staticexport.dev/project-id',
  pageCount: 'staticexport.dev/page-count',
  exportJobId: 'staticexport.dev/export-job-id',
  created: 'org.opencontainers.image.created',
  source: 'org.opencontainers.image.source',
  ociVersion: 'org.opencontainers.image.version',
  title: 'org.opencontainers.image.title',
} as const;

/** Tags that name a version: the content version is already tag-safe (`sha256-<64 hex>`). */
export const VERSION_TAG = /^sha256-[0-9a-f]{64}$/;

export interface SiteMetadata {
  /** Content version `sha256-<hex>` of the site files. */
  version: string;
  /** The site: its domain, or (exported through the current API revision) its project. */
  domain?: string;
  projectId?: string;
  pages: number;
  exportJobId?: string;
  /** ISO time the content was exported; defaults to the Unix epoch so it never varies by itself. */
  created?: string;
}

export interface SiteImage {
  layer: SiteLayer;
  config: BlobSource;
  /** What the manifest names, layer first. */
  blobs: BlobSource[];
  manifest: Buffer;
  manifestDigest: string;
  annotations: Record<string, string>;
}

/** The tag a version is pushed under. */
export function versionTag(version: string): string {
  if (!isContentVersion(version))
    throw new OciError('Usage', `"${version}" is not a content version (sha256-<64 hex>)`);
  return version;
}

function sortedRecord(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function siteAnnotations(meta: SiteMetadata): Record<string, string> {
  // What the metadata names of the site and its job, each annotated when given.
  const given = Object.entries({
    [ANNOTATIONS.domain]: meta.domain,
    [ANNOTATIONS.projectId]: meta.projectId,
    [ANNOTATIONS.exportJobId]: meta.exportJobId,
    [ANNOTATIONS.source]: meta.domain && `https://${meta.domain}/`,
  }).filter((entry): entry is [string, string] => Boolean(entry[1]));
  return sortedRecord({
    [ANNOTATIONS.version]: meta.version,
    ...Object.fromEntries(given),
    [ANNOTATIONS.pageCount]: String(meta.pages),
    [ANNOTATIONS.created]: meta.created ?? new Date(0).toISOString(),
    [ANNOTATIONS.ociVersion]: meta.version,
    [ANNOTATIONS.title]: meta.domain ?? meta.projectId ?? meta.version,
  });
}

/** Builds the config and manifest around a site layer. */
export function siteImage(layer: SiteLayer, meta: SiteMetadata): SiteImage {
  versionTag(meta.version);
  const annotations = siteAnnotations(meta);
  const config = Buffer.from(
    JSON.stringify({
      created: annotations[ANNOTATIONS.created],
      // Site files run nowhere; the platform fields are required by the spec and by runtimes that
      // mount the image as a volume.
      architecture: 'amd64',
      os: 'linux',
      config: { Labels: annotations },
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
    }),
  );
  const configSource = bufferSource(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociManifest,
      config: { mediaType: MEDIA_TYPES.ociConfig, digest: configSource.digest, size: configSource.size },
      layers: [{ mediaType: MEDIA_TYPES.ociLayer, digest: layer.digest, size: layer.size }],
      annotations,
    }),
  );
  return {
    layer,
    config: configSource,
    blobs: [layer, configSource],
    manifest,
    manifestDigest: digestOf(manifest),
    annotations,
  };
}

export interface PushedImage {
  registry: string;
  repository: string;
  /** Manifest digest: what a signature covers and `repository@digest` pins. */
  digest: string;
  tags: string[];
  /** What happened to each blob, in the image's order. */
  blobs: { digest: string; outcome: 'exists' | 'mounted' | 'uploaded' }[];
}

export interface PushImageOptions {
  /** Repositories of the same registry that may hold the layer already (cross-repository mount). */
  mountFrom?: string[];
  /**
   * Called with the pushed manifest's digest (and the client that pushed it) before the moving
   * tags are set: a signer hooks in here so a followed tag never points at an unsigned manifest.
   */
  afterManifest?: (image: PushedImage, client: RegistryClient) => Promise<void>;
}

/**
 * Pushes blobs, then the manifest under its version tag, then the moving tags (`tags` after the
 * first) so followers see a version only once it is complete.
 */
export async function pushImage(
  client: RegistryClient,
  repository: string,
  image: Pick<SiteImage, 'blobs' | 'manifest'>,
  tags: string[],
  options: PushImageOptions = {},
): Promise<PushedImage> {
  if (tags.length === 0) throw new OciError('Usage', 'pushImage needs at least one tag');
  const blobs: PushedImage['blobs'] = [];
  for (const blob of image.blobs) {
    blobs.push({ digest: blob.digest, outcome: await client.pushBlob(repository, blob, options.mountFrom) });
  }
  const [first, ...moving] = tags as [string, ...string[]];
  const digest = await client.putManifest(repository, first, image.manifest, MEDIA_TYPES.ociManifest);
  const pushed: PushedImage = { registry: client.registry, repository, digest, tags, blobs };
  await options.afterManifest?.(pushed, client);
  for (const tag of moving)
    await client.putManifest(repository, tag, image.manifest, MEDIA_TYPES.ociManifest);
  return pushed;
}

/** Reads the annotations of a pushed site image (undefined when the tag is absent). */
export async function readSiteAnnotations(
  client: RegistryClient,
  repository: string,
  reference: string,
): Promise<{ digest: string; annotations: Record<string, string>; layers: Descriptor[] } | undefined> {
  const manifest = await client.getManifest(repository, reference);
  if (!manifest) return undefined;
  const parsed = JSON.parse(manifest.bytes.toString('utf8')) as {
    annotations?: Record<string, string>;
    layers?: Descriptor[];
  };
  return { digest: manifest.digest, annotations: parsed.annotations ?? {}, layers: parsed.layers ?? [] };
}
