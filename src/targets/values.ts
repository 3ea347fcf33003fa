import { stringify } from 'yaml';

/** What every target writes (and the CLI's --values-out): the site chart's `staticExport` block. */
export interface StaticExportValues {
  /** Empty for a registry source (no link). */
  bundleUrl: string;
  version: string;
  /** A registry source's image, `REGISTRY/REPOSITORY@sha256:…` (not a secret). */
  ociReference?: string;
}

function staticExportValues(v: StaticExportValues) {
  return {
    staticExport: {
      enabled: true,
      bundleUrl: v.bundleUrl,
      version: v.version,
      ...(v.ociReference ? { oci: { reference: v.ociReference } } : {}),
    },
  };
}

/** The values as a YAML document for `helm upgrade -f` (it carries the presigned link: keep it secret). */
export function renderValuesYaml(v: StaticExportValues): string {
  return stringify(staticExportValues(v));
}
