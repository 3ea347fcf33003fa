/** A release failure the user can fix: its message is one line that names the fix. */
export class ReleaseError extends Error {
  override name = 'ReleaseError';
}
