// One write at a time per repository within the process: several releases writing to one
// repository queue here instead of racing each other's pushes (each would turn the other's push
// into a non-fast-forward retry).

const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` once every earlier holder of `key` (a repository as normalizeGitUrl spells it) has finished. An aborted `signal` while waiting
 * rejects with its reason and leaves the queue as it was.
 */
export async function withRepositoryLock<T>(
  key: string,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release = () => {};
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  // The next caller waits for this one, which waits for the previous: a chain per key.
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  try {
    await waitOrAbort(previous, signal);
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

function waitOrAbort(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
