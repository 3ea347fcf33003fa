// Sorts many strings without holding the event loop: one `sort()` of the 200,000 paths of a
// bundle at the entry cap held it for 190 ms (archive order) to 870 ms (shuffled) on a busy
// machine. Runs are sorted, then merged pairwise, letting other callbacks run every `sliceMs`.

const RUN = 8192;
// Merge steps between clock reads.
const CHECK_EVERY = 1024;

/** `values` sorted by UTF-16 code units (a new array); the event loop runs every `sliceMs` or so. */
export async function sortInSlices(values: readonly string[], sliceMs: number): Promise<string[]> {
  let sliceStart = performance.now();
  const pause = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  const overdue = () => performance.now() - sliceStart > sliceMs;
  let from: string[] = [];
  for (let start = 0; start < values.length; start += RUN) {
    for (const value of values.slice(start, start + RUN).sort()) from.push(value);
    if (overdue()) await pause();
  }
  const n = from.length;
  let to = new Array<string>(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let left = 0; left < n; left += 2 * width) {
      const mid = Math.min(left + width, n);
      const right = Math.min(left + 2 * width, n);
      let i = left;
      let j = mid;
      // Runs already in order (an archive written in directory order) are copied, not compared.
      if (mid >= right || (from[mid - 1] as string) <= (from[mid] as string)) j = right;
      for (let k = left; k < right; k++) {
        // Equal values keep their order (left run first).
        to[k] =
          j >= right || (i < mid && (from[i] as string) <= (from[j] as string))
            ? (from[i++] as string)
            : (from[j++] as string);
        if ((k & (CHECK_EVERY - 1)) === 0 && overdue()) await pause();
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
