// Sorts many strings without holding the event loop: one `sort()` of the 200,000 paths of a
// bundle at the entry cap held it for 190 ms (archive order) to 870 ms (shuffled) on a busy
// machine. Runs are sorted, then merged pairwise, letting other callbacks run every `sliceMs`.

const RUN = 8192;
// Merge steps between clock reads.
const CHECK_EVERY = 1024;

/**
 * `values` sorted by UTF-16 code units, as `sort()` without a comparator sorts strings; the event
 * loop runs every `sliceMs` or so. Sorts `values` itself (the caller's own copy: 200,000 paths
 * take 1.6 MB per array, and each copy counted in the peak RSS) and returns it or the one other
 * array the merges need.
 */
export async function sortInSlices(values: string[], sliceMs: number): Promise<string[]> {
  let sliceStart = performance.now();
  const pause = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  const overdue = () => performance.now() - sliceStart > sliceMs;
  let from = values;
  for (let start = 0; start < from.length; start += RUN) {
    const run = from.slice(start, start + RUN).sort();
    for (let k = 0; k < run.length; k++) from[start + k] = run[k] as string;
    if (overdue()) await pause();
  }
  const n = from.length;
  if (n <= RUN) return from;
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
