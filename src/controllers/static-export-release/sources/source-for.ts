// Which Source a release follows, as targetFor picks its target: the reconciler names no source.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { platformExport } from '../export/platform-export.ts';
import { ociRegistry } from '../registry/oci-registry.ts';
import type { Source, SourceContext } from './source.ts';

/** The registry spec.source names; without one, the platform's exports of spec.domain or spec.projectId. */
export function sourceFor(ctx: SourceContext, release: StaticExportRelease): Source {
  return ociRegistry(ctx, release) ?? platformExport(ctx);
}
