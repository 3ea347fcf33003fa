// The embedded admin API. The `static-export simulate` command maps its flags onto
// SimulatorOptions: --port -> port, --host -> host, --key/--key-file -> adminKey, --public-url ->
// publicBaseUrl, --docs -> docsDir,
// --export-duration -> exportDurationMs, --export-progress -> exportProgress, --link-ttl -> linkTtlSeconds,
// --link-style -> linkStyle, --api-revision -> apiRevision, --fault (repeatable,
// parsed with parseFault) -> faults; --json only changes how baseUrl and adminKey are printed.

export type { ExportJobSnapshot, ExportJobStatus } from './export-jobs.ts';
export {
  FAULT_ENDPOINTS,
  type FaultAction,
  type FaultEndpoint,
  FaultParseError,
  type FaultSpec,
  formatFault,
  parseFault,
} from './faults.ts';
export { renderMarkdown } from './markdown.ts';
export { EXPORT_PROGRESS_MODELS, type ExportProgressModel } from './progress.ts';
export {
  type RecordedRequest,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from './server.ts';
export { DEFAULT_DOCS_DIR, listDocs, pageUrlPath, type RenderedBundle, renderBundle } from './site.ts';
