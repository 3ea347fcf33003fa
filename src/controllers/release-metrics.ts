// Per-release gauges that answer "is my site current?", read from the releases' status in the
// informer cache at scrape time: the controller needs no metrics calls, and a deleted release's
// series go with it. Only the leader has the cache, so standby replicas report no releases.
import { Gauge } from 'prom-client';
import type { StaticExportRelease } from '../crd/index.ts';
import type { Metrics } from '../runtime/metrics.ts';

const STATUSES = ['True', 'False', 'Unknown'] as const;

type Release = Pick<StaticExportRelease, 'metadata' | 'status'>;

const seconds = (iso: string | undefined): number | undefined =>
  iso === undefined ? undefined : Date.parse(iso) / 1000;

/** Registers the per-release gauges on `metrics`; `releases` lists the cached releases (or none). */
export function registerReleaseMetrics(metrics: Metrics, releases: () => readonly Release[]): void {
  const p = metrics.prefix;
  const registers = [metrics.registry];
  const id = (r: Release) => ({ namespace: r.metadata.namespace ?? '', name: r.metadata.name });

  /** Each release's conditions, a release with no Ready condition yet reporting Ready Unknown. */
  const conditionsOf = (r: Release) => {
    const conditions = r.status?.conditions ?? [];
    return conditions.some((c) => c.type === 'Ready')
      ? conditions
      : [...conditions, { type: 'Ready', status: 'Unknown' as const, reason: '' }];
  };

  // No reason label here: a label that changes starts a new series, and with it a new alert
  // instance, so a release whose reason alternates (ExportFailed, Exporting, ...) would never
  // stay not Ready long enough to alert. The reason has its own series below.
  new Gauge({
    name: `${p}release_condition`,
    help: "A release's conditions, as cert-manager's certificate_ready_status: 1 on the series of the condition's current status, 0 on the other two. A release with no Ready condition yet reports Ready Unknown. The reason is in static_export_release_condition_reason.",
    labelNames: ['namespace', 'name', 'type', 'status'],
    registers,
    collect() {
      this.reset();
      for (const r of releases()) {
        for (const c of conditionsOf(r)) {
          for (const status of STATUSES) {
            this.set({ ...id(r), type: c.type, status }, c.status === status ? 1 : 0);
          }
        }
      }
    },
  });

  new Gauge({
    name: `${p}release_condition_reason`,
    help: "The reason of each of a release's conditions now, as an info series: always 1, on the one series of the current reason (empty for a release with no Ready condition yet). A change of reason ends the old series.",
    labelNames: ['namespace', 'name', 'type', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const r of releases()) {
        for (const c of conditionsOf(r)) this.set({ ...id(r), type: c.type, reason: c.reason }, 1);
      }
    },
  });

  /** A gauge of one timestamp or figure per release; releases without it have no series. */
  const perRelease = (name: string, help: string, value: (r: Release) => number | undefined) =>
    new Gauge({
      name: `${p}${name}`,
      help,
      labelNames: ['namespace', 'name'],
      registers,
      collect() {
        this.reset();
        for (const r of releases()) {
          const v = value(r);
          if (v !== undefined && Number.isFinite(v)) this.set(id(r), v);
        }
      },
    });

  perRelease(
    'release_last_published_timestamp_seconds',
    'When the version served now was published (status.history), as a Unix timestamp.',
    (r) => seconds(r.status?.history?.[0]?.appliedAt),
  );
  perRelease(
    'release_last_export_duration_seconds',
    "How long the release's last completed export took (status.exportDurationsSeconds).",
    (r) => r.status?.exportDurationsSeconds?.[0],
  );
  perRelease(
    'release_link_expiration_timestamp_seconds',
    'When the served bundle link expires (status.current.expiresAt), as a Unix timestamp; releases that follow a registry have none.',
    (r) => seconds(r.status?.current?.expiresAt),
  );
  perRelease(
    'release_link_renewal_timestamp_seconds',
    'When the operator renews the bundle link (status.current.renewalTime), as a Unix timestamp.',
    (r) => seconds(r.status?.current?.renewalTime),
  );
}
