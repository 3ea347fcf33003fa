// What `static-export status` says of a release, read from its status alone: the Ready condition,
// what is served, the link's expiry and renewal, the last publish, the rollout and the Git write-back.
import type { StaticExportRelease } from '../crd/static-export-release.ts';
import type { Condition } from '../runtime/conditions.ts';
import { terminalSafe } from '../terminal-text.ts';

interface ReleaseSummary {
  namespace: string;
  name: string;
  /** True, False or Unknown (Unknown too before the operator first wrote status). */
  ready: string;
  reason: string;
  message: string;
  /** Work under way (kstatus Reconciling). */
  reconciling: boolean;
  /** The user must act (kstatus Stalled). */
  stalled: boolean;
  /** The operator has not acted on the latest spec yet. */
  stale: boolean;
  version?: string;
  lastPublished?: string;
  linkExpiresAt?: string;
  linkRenewalTime?: string;
  /** Complete, RollingOut (Syncing with onNewContent Sync) or Stalled, for the last roll or sync. */
  rollout?: 'Complete' | 'RollingOut' | 'Syncing' | 'Stalled';
  /** spec.gitWriteBack's condition: its reason (Committed, WriteBackPending or the failure's). */
  gitWriteBack?: { status: string; reason: string; message: string };
  suspended: boolean;
}

const condition = (r: StaticExportRelease, type: string): Condition | undefined =>
  r.status?.conditions?.find((c) => c.type === type);

function rolloutState(r: StaticExportRelease): ReleaseSummary['rollout'] {
  const rollout = r.status?.current?.rollout;
  if (!rollout) return undefined;
  if (rollout.stalled) return 'Stalled';
  if (rollout.completedAt) return 'Complete';
  return rollout.via === 'Sync' ? 'Syncing' : 'RollingOut';
}

export function summarize(r: StaticExportRelease): ReleaseSummary {
  const ready = condition(r, 'Ready');
  const current = r.status?.current;
  const observed = r.status?.observedGeneration ?? -1;
  const rollout = rolloutState(r);
  const git = condition(r, 'GitWriteBack');
  return {
    namespace: r.metadata.namespace ?? '',
    name: r.metadata.name ?? '',
    ready: ready?.status ?? 'Unknown',
    reason: ready?.reason ?? 'NotObserved',
    message:
      ready?.message ??
      'The operator has not reported on this release yet: is it running and watching this namespace?',
    reconciling: condition(r, 'Reconciling')?.status === 'True',
    stalled: condition(r, 'Stalled')?.status === 'True',
    stale: observed !== (r.metadata.generation ?? 0),
    ...(current?.version ? { version: current.version } : {}),
    ...(r.status?.history?.[0]?.appliedAt ? { lastPublished: r.status.history[0].appliedAt } : {}),
    ...(current?.expiresAt ? { linkExpiresAt: current.expiresAt } : {}),
    ...(current?.renewalTime ? { linkRenewalTime: current.renewalTime } : {}),
    ...(rollout ? { rollout } : {}),
    ...(git ? { gitWriteBack: { status: git.status, reason: git.reason, message: git.message } } : {}),
    suspended: r.spec.suspend === true,
  };
}

/** A moment as its distance from `now`: "3m ago", "in 2h5m". */
export function relative(iso: string | undefined, now: Date): string {
  if (!iso) return '-';
  const ms = Date.parse(iso) - now.getTime();
  if (Number.isNaN(ms)) return iso;
  const s = Math.round(Math.abs(ms) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const text =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${m}m`
        : s < 86400
          ? `${h}h${m ? `${m}m` : ''}`
          : `${Math.floor(s / 86400)}d`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** A content version shortened as `git log --oneline` does; registry references stay whole. */
const shortVersion = (v: string | undefined) => (!v ? '-' : v.startsWith('sha256-') ? v.slice(0, 19) : v);

const COLUMNS = [
  'NAMESPACE',
  'NAME',
  'READY',
  'REASON',
  'VERSION',
  'PUBLISHED',
  'LINK EXPIRES',
  'RENEWAL',
  'ROLLOUT',
  'GIT',
  'MESSAGE',
];

/** A failed write-back's message joins Ready's: the site serves, but Git does not hold the version. */
const message = (s: ReleaseSummary) =>
  s.gitWriteBack?.status === 'False' ? `${s.message}; Git: ${s.gitWriteBack.message}` : s.message;

/** A `kubectl get`-style table, one row per release; whoever writes status controls no cell's shape. */
export function formatTable(rows: readonly ReleaseSummary[], now: Date): string {
  const cells = rows.map((s) =>
    [
      s.namespace,
      s.name,
      s.suspended ? `${s.ready} (suspended)` : s.ready,
      s.reason,
      shortVersion(s.version),
      relative(s.lastPublished, now),
      relative(s.linkExpiresAt, now),
      relative(s.linkRenewalTime, now),
      s.rollout ?? '-',
      s.gitWriteBack?.reason ?? '-',
      message(s),
    ].map(terminalSafe),
  );
  const widths = COLUMNS.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[COLUMNS, ...cells].map(line).join('\n')}\n`;
}
