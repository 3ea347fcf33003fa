/** Caps that make hostile or runaway bundles fail cleanly instead of filling the disk or memory. */
export interface BundleLimits {
  /** Largest archive accepted from the network, in bytes. */
  maxArchiveBytes: number;
  /** Largest total size of the extracted files, in bytes (zip-bomb guard). */
  maxExtractedBytes: number;
  /** Most archive entries accepted (files, directories and links all count). */
  maxEntries: number;
  /** Largest ratio of decompressed tar bytes to compressed bytes, checked while streaming. */
  maxCompressionRatio: number;
}

/** How long a download may take in all, retries included: 30 minutes is 2 GiB at about 1.2 MB/s. */
export const DEFAULT_DEADLINE_MS = 30 * 60_000;

// A docs site is a few thousand pages and well under a gigabyte; these leave ample headroom.
// Real sites compress 3-10x (text) and an archive of empty files about 90x (bare tar headers);
// zeros reach about 230x at gzip -1 and 1000x at gzip -9, which only a bomb or padding produces.
export const DEFAULT_LIMITS: BundleLimits = {
  maxArchiveBytes: 2 * 1024 ** 3,
  maxExtractedBytes: 4 * 1024 ** 3,
  maxEntries: 200_000,
  maxCompressionRatio: 150,
};

export function resolveLimits(limits?: Partial<BundleLimits>): BundleLimits {
  return { ...DEFAULT_LIMITS, ...limits };
}

/**
 * A link with less lifetime left than this when it arrives (expired, or as good as) is not written:
 * it would fail every download and be renewed in a loop. The operator's rule and the CLI's.
 */
export const MIN_LINK_LIFETIME_MS = 2_000;

/** True when a link expiring at `expiresAt` has less than MIN_LINK_LIFETIME_MS left at `now`. */
export function linkArrivedExpired(expiresAt: Date, now: Date | number): boolean {
  return expiresAt.getTime() - new Date(now).getTime() < MIN_LINK_LIFETIME_MS;
}
