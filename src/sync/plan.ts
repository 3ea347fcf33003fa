// What a sync does, decided from what is on disk and what the Secret asks for: no effects here.
import type { KeptVersion } from './store.ts';

export type SyncStep =
  /** The wanted version is already served. */
  | { kind: 'serving' }
  /** The wanted version is kept on disk (a rollback): point `current` at it, nothing to download. */
  | { kind: 'swap'; version: string }
  /** Download the wanted version beside the served one, then swap. */
  | { kind: 'fetch'; version: string };

export function nextStep(served: string | undefined, kept: readonly KeptVersion[], wanted: string): SyncStep {
  if (served === wanted) return { kind: 'serving' };
  if (kept.some((k) => k.version === wanted)) return { kind: 'swap', version: wanted };
  return { kind: 'fetch', version: wanted };
}

/**
 * The versions to delete so that `keep` remain: the served one always stays, then the most recently
 * served others (`kept` is most recent first).
 */
export function versionsToRemove(
  kept: readonly KeptVersion[],
  served: string | undefined,
  keep: number,
): string[] {
  const others = kept.filter((k) => k.version !== served);
  const room = Math.max(0, keep - (served !== undefined && kept.some((k) => k.version === served) ? 1 : 0));
  return others.slice(room).map((k) => k.version);
}
