import { InvalidArgumentError } from 'commander';

export interface ReleaseRef {
  namespace: string;
  name: string;
}

const RELEASE_REF = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$/;

/** commander argument parser for `<namespace>/<name>` of a StaticExportRelease. */
export function releaseRef(value: string): ReleaseRef {
  const m = RELEASE_REF.exec(value);
  if (!m?.[1] || !m[3]) throw new InvalidArgumentError('expected <namespace>/<name>, e.g. docs/docs.');
  return { namespace: m[1], name: m[3] };
}
