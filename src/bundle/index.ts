export {
  BUNDLE_CACHE_DIR,
  BundleCache,
  type BundleCacheOptions,
  bundleSource,
  type CachedBundle,
  DEFAULT_BUNDLE_CACHE_ENTRIES,
} from './cache.ts';
export { assertReplaceable, MARKER_FILE } from './destination.ts';
export {
  type Download,
  type DownloadOptions,
  type DownloadResult,
  downloadToFile,
  openDownload,
} from './download.ts';
export { ALLOW_PRIVATE_FLAG, BundleError, type BundleErrorReason, isBundleError } from './errors.ts';
export {
  type ArchiveSummary,
  assertVersion,
  type ExtractOptions,
  extractTarGz,
  inspectArchive,
  type StagedExtraction,
  stageExtraction,
} from './extract.ts';
export { type FetchBundleOptions, type FetchedBundle, fetchBundle } from './fetch.ts';
export {
  type BundleLimits,
  DEFAULT_DEADLINE_MS,
  DEFAULT_LIMITS,
  linkArrivedExpired,
  MIN_LINK_LIFETIME_MS,
  resolveLimits,
} from './limits.ts';
export {
  guardLink,
  isPublicAddress,
  type LinkDestinations,
  linkDestinationsFor,
} from './link-destination.ts';
export { type ProbeOptions, probeLink } from './link-probe.ts';
export {
  type MirroredBundle,
  type MirrorIndex,
  type MirrorManifest,
  type MirrorOptions,
  mirrorBundle,
  readMirrorIndex,
} from './mirror.ts';
export {
  checkPublishGate,
  DEFAULT_GATE,
  type GateLimits,
  type GateVerdict,
} from './publish-gate.ts';
export { type SiteSummary, summarizeSite } from './site-check.ts';
export { type ContentSummary, contentVersion, isContentVersion } from './version.ts';
