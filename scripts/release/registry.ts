// Fails the release before anything is built when the registry does not answer.
import { ReleaseError } from './errors.ts';
import type { Target } from './options.ts';

/** Any answer from /v2/ (200, or 401 asking for credentials) means the registry is there. */
export async function assertRegistryReachable(target: Target, plainHttp: boolean): Promise<void> {
  const url = `${plainHttp ? 'http' : 'https'}://${target.registry}/v2/`;
  try {
    await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new ReleaseError(
      `registry ${target.registry} is unreachable (${why}): start it or fix the host in --to` +
        (plainHttp ? '' : ' (a registry serving plain http needs --plain-http)'),
    );
  }
}
