// What a promise rejected with, for tests that go on to look at the error.
import { expect } from 'vitest';

/** The error `promise` rejected with, checked to be a `type` (the test fails if it resolved). */
export async function rejectionOf<E extends Error>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}
