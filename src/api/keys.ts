// Admin key checks done before any request, so misconfiguration fails fast and clearly.

import { AdminKeyError } from './errors.ts';

export const DEFAULT_KEY_PREFIX = 'mint';

/**
 * Throws AdminKeyError unless `key` looks like an admin key: non-empty, no whitespace,
 * `<prefix>_<rest>`, and not a public assistant key (`<prefix>_dsc_…`). Messages never quote the key.
 */
export function validateAdminKey(key: string | undefined, prefix: string = DEFAULT_KEY_PREFIX): string {
  if (key === undefined || key === '') {
    throw new AdminKeyError(
      'No admin API key given: generate one on the API keys page of the dashboard settings and pass it in.',
    );
  }
  if (/\s/.test(key)) {
    throw new AdminKeyError(
      'The admin API key contains whitespace (often a trailing newline from a file or Secret): remove it.',
    );
  }
  if (key.startsWith(`${prefix}_dsc_`)) {
    throw new AdminKeyError(
      `This is a public assistant key (it starts with "${prefix}_dsc_"), not an admin key: ` +
        `use an admin key (it starts with "${prefix}_") from the API keys page of the dashboard settings.`,
    );
  }
  if (!key.startsWith(`${prefix}_`) || key.length === prefix.length + 1) {
    throw new AdminKeyError(
      `The admin API key does not have the expected form "${prefix}_…": copy the whole admin key from ` +
        'the API keys page of the dashboard settings.',
    );
  }
  return key;
}
