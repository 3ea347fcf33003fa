/** Caps that make hostile or runaway bundles fail cleanly instead of filling the disk. */
export interface BundleLimits {
  /** Largest archive accepted from the network, in bytes. */
  maxArchiveBytes: number;
  /** Largest total size of the extracted files, in bytes (zip-bomb guard). */
  maxExtractedBytes: number;
  /** Most archive entries accepted (files, directories and links all count). */
  maxFiles: number;
}

// A docs site is a few thousand pages and well under a gigabyte; these leave ample headroom.
export const DEFAULT_LIMITS: BundleLimits = {
  maxArchiveBytes: 2 * 1024 ** 3,
  maxExtractedBytes: 4 * 1024 ** 3,
  maxFiles: 200_000,
};

export function resolveLimits(limits?: Partial<BundleLimits>): BundleLimits {
  return { ...DEFAULT_LIMITS, ...limits };
}
