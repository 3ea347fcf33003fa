// Publishing a site version to a repository: package the files, skip what the target already has
// (a version is found by its tag, the content version), move the followed tag, prune old versions.
// The decisions are pure functions; `publishSite` and `pruneVersions` only carry them out.
import { summarizeSite } from '../bundle/site-check.ts';
import { contentVersion } from '../bundle/version.ts';
import { OciError } from './errors.ts';
import {
  ANNOTATIONS,
  type PushedImage,
  type PushImageOptions,
  pushImage,
  type SiteImage,
  type SiteMetadata,
  siteImage,
  VERSION_TAG,
  versionTag,
} from './image.ts';
import { siteLayer } from './layer.ts';
import type { RegistryClient } from './registry.ts';
import { signatureTag } from './sign.ts';

export interface PackagedSite {
  image: SiteImage;
  version: string;
  pages: number;
  files: number;
}

/**
 * Packages the extracted site under `dir`; `known` skips re-reading what the bundle pipeline
 * already learned (content version and pages).
 */
export async function packageSite(
  dir: string,
  meta: Omit<SiteMetadata, 'version' | 'pages'>,
  known?: { version: string; pages: number },
): Promise<PackagedSite> {
  const version = known?.version ?? (await contentVersion(dir)).version;
  const pages = known?.pages ?? (await summarizeSite(dir)).pages;
  const layer = await siteLayer(dir);
  const image = siteImage(layer, { ...meta, version, pages });
  return { image, version, pages, files: layer.files };
}

/** What to do for one version, given what the target holds. */
export type PublishDecision =
  /** The version is not there: push blobs and manifest. */
  | { action: 'push' }
  /** The version is there (same content): push nothing, use its manifest. */
  | { action: 'skip'; digest: string };

export function decidePublish(existing: { digest: string } | undefined): PublishDecision {
  return existing ? { action: 'skip', digest: existing.digest } : { action: 'push' };
}

/** Moving tags (latest, a channel) that do not point at `digest` yet. */
export function tagsToMove(digest: string, current: Record<string, string | undefined>): string[] {
  return Object.entries(current)
    .filter(([, pointsTo]) => pointsTo !== digest)
    .map(([tag]) => tag);
}

export interface VersionInfo {
  tag: string;
  digest: string;
  /** org.opencontainers.image.created; versions without it count as oldest. */
  created: string | undefined;
}

/**
 * Versions beyond the newest `keep` (by creation time, then tag), never one in `protect` (what
 * the moving tags point at and what was just published).
 */
export function versionsToPrune(
  versions: VersionInfo[],
  keep: number,
  protect: ReadonlySet<string>,
): VersionInfo[] {
  const newestFirst = [...versions].sort((a, b) => {
    const byTime = (b.created ?? '').localeCompare(a.created ?? '');
    return byTime !== 0 ? byTime : b.tag.localeCompare(a.tag);
  });
  const kept = new Set<string>();
  for (const v of newestFirst) {
    if (kept.size >= keep) break;
    kept.add(v.digest);
  }
  return newestFirst.filter((v) => !kept.has(v.digest) && !protect.has(v.digest));
}

export interface PublishOptions extends PushImageOptions {
  /** Moving tags to point at this version (e.g. latest). */
  tags?: string[];
}

export interface PublishResult {
  version: string;
  digest: string;
  /** False when the target already had this version. */
  pushed: boolean;
  /** Moving tags that were (re)pointed. */
  moved: string[];
  blobs: PushedImage['blobs'];
}

/**
 * Pushes a packaged version unless the repository has it; then moves the tags that lag behind.
 * `afterManifest` runs for a version found in the repository too.
 */
export async function publishSite(
  client: RegistryClient,
  repository: string,
  /** The image, or how to build it: an unchanged version is then never packaged. */
  site: { version: string; image: SiteImage | (() => Promise<SiteImage>) },
  options: PublishOptions = {},
): Promise<PublishResult> {
  const tag = versionTag(site.version);
  const decision = decidePublish(await client.resolve(repository, tag));
  const moving = options.tags ?? [];
  if (decision.action === 'push') {
    const image = typeof site.image === 'function' ? await site.image() : site.image;
    const pushed = await pushImage(client, repository, image, [tag, ...moving], options);
    return { version: site.version, digest: pushed.digest, pushed: true, moved: moving, blobs: pushed.blobs };
  }
  // The version is there already, maybe unsigned (pushed before signing was set up): the hook
  // (a signer) still runs, before any moving tag points at it.
  await options.afterManifest?.(
    { registry: client.registry, repository, digest: decision.digest, tags: [tag, ...moving], blobs: [] },
    client,
  );
  const current: Record<string, string | undefined> = {};
  for (const t of moving) current[t] = (await client.resolve(repository, t))?.digest;
  const move = tagsToMove(decision.digest, current);
  if (move.length > 0) {
    // The registry's own bytes (its version may carry another export's job id or time).
    const manifest = await client.getManifest(repository, decision.digest);
    if (!manifest)
      throw new OciError('NotFound', `${repository}@${decision.digest} vanished while being tagged`);
    for (const t of move) await client.putManifest(repository, t, manifest.bytes, manifest.mediaType);
  }
  return { version: site.version, digest: decision.digest, pushed: false, moved: move, blobs: [] };
}

/**
 * Deletes versions beyond the newest `keep` (and their cosign `.sig` signatures); the moving tags' targets and
 * `protect` stay. Returns the deleted versions.
 */
export async function pruneVersions(
  client: RegistryClient,
  repository: string,
  keep: number,
  options: { movingTags?: string[]; protect?: string[] } = {},
): Promise<VersionInfo[]> {
  const versionTags = (await client.listTags(repository)).filter((t) => VERSION_TAG.test(t));
  if (versionTags.length <= keep) return [];
  const versions: VersionInfo[] = [];
  for (const tag of versionTags) {
    const manifest = await client.getManifest(repository, tag);
    if (!manifest) continue;
    let created: string | undefined;
    try {
      created = (JSON.parse(manifest.bytes.toString('utf8')) as { annotations?: Record<string, string> })
        .annotations?.[ANNOTATIONS.created];
    } catch {
      created = undefined;
    }
    versions.push({ tag, digest: manifest.digest, created });
  }
  const protect = new Set(options.protect ?? []);
  for (const t of options.movingTags ?? []) {
    const digest = (await client.resolve(repository, t))?.digest;
    if (digest) protect.add(digest);
  }
  const prune = versionsToPrune(versions, keep, protect);
  for (const v of prune) {
    try {
      await client.deleteManifest(repository, v.digest);
      const signature = await client.resolve(repository, signatureTag(v.digest));
      if (signature) await client.deleteManifest(repository, signature.digest);
    } catch (error) {
      if (error instanceof OciError && error.reason === 'Unsupported') {
        throw new OciError(
          'Unsupported',
          `${error.message}: pruning needs manifest deletion enabled in the registry (Distribution: ` +
            'storage.delete.enabled: true), or leave --keep unset',
          { cause: error },
        );
      }
      throw error;
    }
  }
  return prune;
}
