// Shared builders for the pure decide tests of StaticExportRelease: a fixed clock, content
// versions, a release object and the observed state decide() reads. Each test file keeps its own
// status fixtures (what "serving" means differs per source).
import {
  DEFAULT_TUNABLES,
  type Observed,
  type PlatformCase,
  type PlatformObserved,
  type RegistryCase,
  type RegistryObserved,
  type Status,
} from '../../src/controllers/static-export-release/release-model.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../src/crd/index.ts';

export const NOW = new Date('2026-11-22T12:00:00Z');
/** An ISO time `offsetMs` from NOW. */
export const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();
export const MIN = 60_000;
export const V1 = `sha256-${'1'.repeat(64)}`;
export const V2 = `sha256-${'2'.repeat(64)}`;

/** The spec of a platform-source release (the admin API with a key). */
export const PLATFORM_SPEC = {
  domain: 'docs.example.com',
  credentialsSecretRef: { name: 'key' },
  target: { valuesSecret: { name: 'values' } },
};

export interface ReleaseOptions {
  /** Merged over `base`. */
  spec?: object;
  /** The spec fields `spec` is merged over; PLATFORM_SPEC unless given. */
  base?: object;
  status?: Status;
  generation?: number;
  annotations?: Record<string, string>;
  namespace?: string;
  /** The object's uid; null leaves it out. */
  uid?: string | null;
}

/** web/docs, generation 1, with the spec parsed (defaults applied) as the API server would. */
export function release(opts: ReleaseOptions = {}): StaticExportRelease {
  const uid = opts.uid === undefined ? 'uid-1' : opts.uid;
  return {
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: {
      name: 'docs',
      namespace: opts.namespace ?? 'web',
      ...(uid === null ? {} : { uid }),
      generation: opts.generation ?? 1,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: staticExportReleaseSpecSchema.parse({ ...(opts.base ?? PLATFORM_SPEC), ...opts.spec }),
    ...(opts.status ? { status: opts.status } : {}),
  };
}

/** What either source may observe besides the release and the clock. */
type Extra = Partial<Omit<PlatformObserved, 'source'>> & Partial<Omit<RegistryObserved, 'source'>>;

/** What decide() observes at NOW for `r` (its source as its spec says, as sourceFor picks it), plus `extra`. */
export function observed(r: StaticExportRelease, extra: Extra = {}): Observed {
  const oci = r.spec.source?.oci;
  const seen: Observed = oci
    ? { source: 'registry', oci, now: NOW, release: r }
    : { source: 'platform', now: NOW, release: r };
  return { ...seen, ...extra } as Observed;
}

/** `observed` of a release following a registry (spec.source.oci). */
export function registryObserved(r: StaticExportRelease, extra: Extra = {}): RegistryObserved {
  const o = observed(r, extra);
  if (o.source !== 'registry') throw new Error('not a registry release');
  return o;
}

type ExportStatus = NonNullable<Status['export']>;
type CurrentStatus = NonNullable<Status['current']>;

/** Serving V1 from export se_1 (finished 59 minutes ago), link renewed in 20 minutes. */
export const servingV1 = (
  exportExtra: Partial<ExportStatus> = {},
  current: Partial<CurrentStatus> = {},
): Status => ({
  observedGeneration: 1,
  export: {
    jobId: 'se_1',
    state: 'completed',
    startedAt: at(-60 * MIN),
    finishedAt: at(-59 * MIN),
    ...exportExtra,
  },
  current: {
    version: V1,
    jobId: 'se_1',
    expiresAt: at(30 * MIN),
    renewalTime: at(20 * MIN),
    appliedAt: at(-59 * MIN),
    ...current,
  },
  history: [{ version: V1, jobId: 'se_1', appliedAt: at(-59 * MIN) }],
});

/** `observed` of a release exported by the platform. */
export function platformObserved(r: StaticExportRelease, extra: Extra = {}): PlatformObserved {
  const o = observed(r, extra);
  if (o.source !== 'platform') throw new Error('not a platform release');
  return o;
}

/** What a platform rule reads for `r` at NOW: its status as found, the default tunables. */
export const platformCase = (r: StaticExportRelease, extra: Extra = {}): PlatformCase => ({
  o: platformObserved(r, extra),
  status: r.status ?? {},
  tun: DEFAULT_TUNABLES,
});

/** What a registry rule reads for `r` at NOW: its status as found. */
export const registryCase = (r: StaticExportRelease, extra: Extra = {}): RegistryCase => ({
  o: registryObserved(r, extra),
  status: r.status ?? {},
});
