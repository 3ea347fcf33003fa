// Stream buffers (socket reads, inflated chunks) live outside V8's heap, held by small objects in
// it: their memory goes back only when a collection finds those objects dead. Streaming a bundle
// allocates little else, so the young generation rarely fills and V8 waits for its external
// memory limit instead, then runs a full mark-compact: one every 10-20 MB streamed (25 for a
// 200 MiB bundle), with the dead buffers adding about 25 MB to the peak RSS meanwhile. A
// young-generation collection every few MB streamed frees them for a fraction of that.
import { setFlagsFromString } from 'node:v8';

const { runInNewContext } = process.getBuiltinModule('node:vm');

let collect: ((options: { type: 'minor' }) => void) | undefined;

/** A young-generation collection (see above). */
export function collectYoung(): void {
  if (!collect) {
    // On first use, not at start-up: a process streaming no bundle (--help, an idle operator)
    // makes no context (2-3 MB of RSS). The flag adds `gc` to contexts created after it.
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as (options: { type: 'minor' }) => void;
  }
  collect({ type: 'minor' });
}
