// What the site's values Secret asks to serve: its version and where to get it (bundle link or site
// image), read from the keys the site chart reads too.
import { z } from 'zod';
import { isContentVersion } from '../bundle/version.ts';
import { registerSecret } from '../redact.ts';

export const SecretSchema = z.object({
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  data: z.record(z.string(), z.string()).nullish(),
});
export type Secret = z.infer<typeof SecretSchema>;

interface SecretKeys {
  bundleUrl: string;
  version: string;
  ociReference: string;
}

/** Where a version comes from: a bundle link (or file:// URL of a mirrored bundle) or a site image. */
export type SiteSource = { url: string } | { oci: string };

export interface WantedContent {
  version: string;
  source: SiteSource;
}

/** The content a Secret asks for, or why it cannot be used (naming the Secret, the key and the fix). */
export function wantedContent(
  secret: Secret,
  keys: SecretKeys,
): { wanted: WantedContent } | { problem: string } {
  const ref = `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name}`.replace(' /', ' ');
  const value = (key: string) => {
    const encoded = secret.data?.[key];
    return encoded ? Buffer.from(encoded, 'base64').toString('utf8').trim() : '';
  };
  const version = value(keys.version);
  if (!version) {
    return {
      problem: `${ref} has no key "${keys.version}" or it is empty: it must hold the content version to serve (set by the operator; --version-key names another key).`,
    };
  }
  if (!isContentVersion(version)) {
    return {
      problem: `${ref} key "${keys.version}" is not a content version (sha256-<64 hex digits>): "${version.slice(0, 80)}".`,
    };
  }
  // As in `fetch`, a site image wins over a bundle link when both are set.
  const oci = value(keys.ociReference);
  if (oci) return { wanted: { version, source: { oci } } };
  const url = value(keys.bundleUrl);
  if (url) {
    // A link is a credential: scrubbed from whatever may print it later, and never quoted here.
    if (!url.startsWith('file:')) registerSecret(url);
    if (!URL.canParse(url) || !['http:', 'https:', 'file:'].includes(new URL(url).protocol)) {
      return {
        problem: `${ref} key "${keys.bundleUrl}" is not an http(s) bundle link or a file:// URL (check the host and port).`,
      };
    }
    return { wanted: { version, source: { url } } };
  }
  return {
    problem: `${ref} has neither key "${keys.bundleUrl}" nor key "${keys.ociReference}" (or both are empty): one must say where version ${version} comes from (--bundle-url-key and --oci-reference-key name other keys).`,
  };
}
