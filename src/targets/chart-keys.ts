/**
 * The keys the site chart reads in existing-Secret mode (`staticExport.existingSecretKeys`), next to
 * the values document: `helm install --set staticExport.existingSecret=<name>` works as it is. The
 * sync sidecar reads the same keys.
 */
export const CHART_KEYS = {
  bundleUrl: 'bundleUrl',
  version: 'version',
  ociReference: 'ociReference',
} as const;
