// Go-style durations ("90s", "1h30m"), the format Kubernetes users know from metav1.Duration.
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** RE2- and JS-compatible; used by zod at runtime and by CEL in the API server. */
export const DURATION_PATTERN = '^([0-9]+(ms|s|m|h))+$';

const PART = /([0-9]+)(ms|s|m|h)/g;

/** Milliseconds of a Go-style duration, or undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  if (!new RegExp(DURATION_PATTERN).test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) {
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  return total;
}
