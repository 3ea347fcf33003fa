// When a freshly handed-out bundle link is already dead. The operator and the CLI share the rule: a
// link that arrives expired (or as good as) would be written, fail every download and be renewed in
// a loop, so neither writes it.

/** A link with less lifetime left than this when it arrives (expired, or as good as) is not written. */
export const MIN_LINK_LIFETIME_MS = 2_000;

/** True when a link expiring at `expiresAt` has less than MIN_LINK_LIFETIME_MS left at `now`. */
export function linkArrivedExpired(expiresAt: Date, now: Date | number): boolean {
  return expiresAt.getTime() - new Date(now).getTime() < MIN_LINK_LIFETIME_MS;
}
