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

/** Milliseconds as a Go-style duration, largest units first ("2m30s", "1h", "500ms"). */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  let rest = Math.round(ms);
  let text = '';
  for (const [unit, size] of [
    ['h', UNIT_MS.h],
    ['m', UNIT_MS.m],
    ['s', UNIT_MS.s],
    ['ms', UNIT_MS.ms],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * size;
  }
  return text;
}
