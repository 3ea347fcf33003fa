// Limits and formats of the resources' fields: the schemas enforce them, and the code that fills
// or reads those fields (the poll schedule, the publish gate, the CLI's flags of the same meaning)
// takes them from here, so nothing below the schemas decides what the schemas accept.

/** How many progress samples status keeps: the first (the rate's baseline) and the latest changes. */
export const SAMPLE_LIMIT = 4;
/** How many previous export durations status keeps. */
export const DURATION_LIMIT = 5;

/** A page drop limit written as a string: "50%". */
export const PAGE_DROP_PATTERN = '^(100|[1-9]?[0-9])%$';

/** Percent of a page drop limit ("50%" or 50), or undefined when it is not one. */
export function pageDropPercent(value: number | string): number | undefined {
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 0 && value <= 100 ? value : undefined;
  return new RegExp(PAGE_DROP_PATTERN).test(value) ? Number.parseInt(value, 10) : undefined;
}
