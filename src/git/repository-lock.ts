// One holder at a time per key within the process, in order: write-backs queue here (all under one
// key, write-version.ts says why) instead of racing each other's pushes or multiplying memory.

const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` once every earlier holder of `key` has finished. An aborted `signal` while waiting
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
