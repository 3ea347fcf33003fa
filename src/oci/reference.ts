import { OciError } from './errors.ts';

/** Where an image lives: `oci://registry[:port]/repository[:tag|@digest]`. */
export interface OciReference {
  /** Host with optional port, lowercase, as used in auth files and URLs. */
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

// From the OCI distribution spec.
const REPOSITORY = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const REGISTRY =
  /^(?:[a-z0-9]([a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

export const OCI_REFERENCE_HELP =
  'oci://REGISTRY/REPOSITORY (e.g. oci://registry.internal:5000/docs/docs.example.com), optionally ' +
  'ending in :TAG or @sha256:DIGEST';

export function isTag(value: string): boolean {
  return TAG.test(value);
}

export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}

/** Parses an `oci://` reference; `what` names the flag or field in the error. */
export function parseOciReference(value: string, what = 'reference'): OciReference {
  const bad = (why: string): OciError =>
    new OciError('Usage', `${what} "${value}" ${why}: expected ${OCI_REFERENCE_HELP}`);
  if (!value.startsWith('oci://')) throw bad('does not start with oci://');
  const rest = value.slice('oci://'.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) throw bad('has no repository');
  const registry = rest.slice(0, slash).toLowerCase();
  if (registry.includes('@'))
    throw bad('carries credentials (use --username/--password-stdin or an auth file)');
  if (!REGISTRY.test(registry)) throw bad('has an invalid registry host');
  let path = rest.slice(slash + 1);
  let digest: string | undefined;
  let tag: string | undefined;
  const at = path.indexOf('@');
  if (at >= 0) {
    digest = path.slice(at + 1);
    path = path.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`has an invalid digest "${digest}"`);
  }
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`has an invalid tag "${tag}"`);
  }
  if (!REPOSITORY.test(path) || path.length > 255) {
    throw bad('has an invalid repository (lowercase letters, digits, and . _ - / separators)');
  }
  return { registry, repository: path, ...(tag === undefined ? {} : { tag }), ...(digest ? { digest } : {}) };
}

export function formatOciReference(ref: OciReference): string {
  return `oci://${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Hosts plain http is allowed for without an explicit flag. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
