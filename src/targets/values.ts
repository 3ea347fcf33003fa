import { stringify } from 'yaml';

/** What every target writes (and the CLI's --values-out): the site chart's `staticExport` block. */
export interface StaticExportValues {
  bundleUrl: string;
  version: string;
}

export function staticExportValues(v: StaticExportValues) {
  return { staticExport: { enabled: true, bundleUrl: v.bundleUrl, version: v.version } };
}

/** The values as a YAML document for `helm upgrade -f` (it carries the presigned link: keep it secret). */
export function renderValuesYaml(v: StaticExportValues): string {
  return stringify(staticExportValues(v));
}
