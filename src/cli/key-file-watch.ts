// An admin key file that may change under a running process: the kubelet rewrites a mounted Secret's
// files when the Secret changes, so a rotated key reaches the pod without a restart and the pod
// spec needs nothing derived from the key to roll it.
import { readFile } from 'node:fs/promises';

/** How often the file is read again: the kubelet itself takes up to about a minute to update it. */
const POLL_MS = 2_000;

interface KeyFileWatch {
  /** The flag that named the file, for messages. */
  flag: string;
  path: string;
  /** The key now accepted. */
  current: string;
  /** The key in `text`; throws with a reason that never quotes `text`. */
  parse(text: string): string;
  /** A new key in the file, parsed. */
  onKey(key: string): void;
  /** The file cannot be read or holds no key: the current key stays. Called once per new reason. */
  onRefused(reason: string): void;
}

/**
 * Reads the file every 2 s (polled rather than watched: the kubelet swaps a `..data`
 * symlink, which an inotify watch on the file misses) and reports a changed key or why the file's
 * content is refused. Returns the function that stops it.
 */
export function watchKeyFile(watch: KeyFileWatch): () => void {
  let current = watch.current;
  let refused: string | undefined;
  let reading = false;
  const check = async () => {
    if (reading) return;
    reading = true;
    try {
      const key = watch.parse(await readKeyText(watch.flag, watch.path));
      refused = undefined;
      if (key !== current) {
        current = key;
        watch.onKey(key);
      }
    } catch (error) {
      const reason = (error as Error).message;
      if (reason !== refused) watch.onRefused(reason);
      refused = reason;
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void check(), POLL_MS);
  return () => clearInterval(timer);
}

async function readKeyText(flag: string, path: string): Promise<string> {
  try {
    return (await readFile(path)).toString('utf8');
  } catch (error) {
    throw new Error(`${flag} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}
