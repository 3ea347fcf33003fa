// observe -> decide -> act for one StaticExportRelease. Effects only; decisions live in decide.ts.
import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AdminApiClient } from '../../api/index.ts';
import { NotFoundError } from '../../api/index.ts';
import { fetchBundle } from '../../bundle/index.ts';
import {
  GROUP_VERSION,
  SER_PLURAL,
  type StaticExportRelease,
  staticExportReleaseSpecSchema,
} from '../../crd/index.ts';
import type { Logger } from '../../log.ts';
import { isNotFound, type KubeClient, resourcePath } from '../../runtime/kube-client.ts';
import { observeValuesSecret, TargetError, writeValuesSecret } from '../../targets/values-secret.ts';
import { type ApiClients, readCredentials } from '../credentials.ts';
import { emitEvents, writeStatus } from '../effects.ts';
import {
  afterFailure,
  classifyError,
  type Failure,
  failureEvent,
  invalidSpec,
  nextStep,
} from '../failures.ts';
import type { EventSink, ReconcileResult } from '../types.ts';
import {
  type Action,
  afterPublish,
  afterStart,
  DEFAULT_TUNABLES,
  type Decision,
  decide,
  type EventNote,
  type ExportPoll,
  type Observed,
  type Status,
  type Tunables,
  withFailure,
} from './decide.ts';

export interface ReleaseMetrics {
  exportFinished(seconds: number, result: 'completed' | 'failed'): void;
  bundleBytes(bytes: number): void;
  linkExpiry(namespace: string, name: string, expiresAt: Date | undefined): void;
}

export interface ReleaseReconcilerOptions {
  kube: KubeClient;
  clients: ApiClients;
  events: EventSink;
  logger: Logger;
  /** Where bundles are downloaded and verified (removed afterwards). */
  workDir: string;
  metrics?: ReleaseMetrics;
  tunables?: Tunables;
  now?: () => Date;
}

const releasePath = (ns: string, name?: string) => resourcePath(GROUP_VERSION, SER_PLURAL, ns, name);

// `<release uid>-<8 hex>` and the extraction's `.<that>.tmp-…`/`.old-…` siblings: only ours.
const DOWNLOAD_ENTRY = /^\.?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-[0-9a-f]{8}(\.|$)/;

/** Removes what a killed process left in the work directory mid-download; nothing else there. */
export async function removeDownloadLeftovers(workDir: string): Promise<string[]> {
  const leftovers = (await readdir(workDir).catch(() => [])).filter((n) => DOWNLOAD_ENTRY.test(n));
  await Promise.all(leftovers.map((n) => rm(join(workDir, n), { recursive: true, force: true })));
  return leftovers;
}

export class StaticExportReleaseReconciler {
  private readonly o: ReleaseReconcilerOptions;
  private readonly tunables: Tunables;

  constructor(options: ReleaseReconcilerOptions) {
    this.o = options;
    this.tunables = options.tunables ?? DEFAULT_TUNABLES;
  }

  /** `signal` aborts waits, polls and downloads (not creates) when the operator stops leading. */
  async reconcile(namespace: string, name: string, signal?: AbortSignal): Promise<ReconcileResult> {
    let release: StaticExportRelease;
    try {
      release = await this.o.kube.get<StaticExportRelease>(releasePath(namespace, name));
    } catch (e) {
      if (!isNotFound(e)) throw e;
      // Deleted: the values Secret goes with it (owner reference); only our own series remain.
      this.o.metrics?.linkExpiry(namespace, name, undefined);
      return {};
    }
    const { observed, client } = await this.observe(release, signal);
    const decision = decide(observed, this.tunables);
    this.o.logger.debug(
      {
        release: `${namespace}/${name}`,
        action: decision.action,
        requeueAfterMs: decision.requeueAfterMs,
      },
      'decided',
    );
    return this.act(observed, decision, client, signal);
  }

  private async observe(
    release: StaticExportRelease,
    signal: AbortSignal | undefined,
  ): Promise<{ observed: Observed; client?: AdminApiClient }> {
    const now = (this.o.now ?? (() => new Date()))();
    const spec = staticExportReleaseSpecSchema.safeParse(release.spec);
    if (!spec.success) {
      return { observed: { now, release, blocked: invalidSpec(spec.error) } };
    }
    release = { ...release, spec: spec.data };
    if (release.spec.suspend || release.metadata.deletionTimestamp) return { observed: { now, release } };
    const creds = await readCredentials(this.o.kube, release, this.o.clients.defaults);
    if ('failure' in creds) return { observed: { now, release, blocked: creds.failure } };
    const client = this.o.clients.get(creds);
    const exp = release.status?.export;
    if (exp?.jobId && !exp.finishedAt && exp.state !== 'completed') {
      return {
        observed: { now, release, poll: await this.poll(client, release, exp.jobId, signal) },
        client,
      };
    }
    const served = release.status?.current?.version;
    const targetDrifted = served !== undefined && (await this.targetVersion(release)) !== served;
    return { observed: { now, release, targetDrifted }, client };
  }

  private async poll(
    client: AdminApiClient,
    release: StaticExportRelease,
    jobId: string,
    signal: AbortSignal | undefined,
  ): Promise<ExportPoll> {
    try {
      const job = await client.getExport(jobId, { signal });
      return {
        kind: 'job',
        state: job.status,
        ...(typeof job.progress === 'number' ? { progress: job.progress } : {}),
        ...(typeof job.pageCount === 'number' ? { pageCount: job.pageCount } : {}),
        ...(typeof job.error === 'string' ? { error: job.error } : {}),
      };
    } catch (e) {
      if (signal?.aborted) throw e;
      if (e instanceof NotFoundError) return { kind: 'notFound' };
      return { kind: 'failed', failure: classifyError(e, secretRefText(release)) };
    }
  }

  private async act(
    o: Observed,
    d: Decision,
    client: AdminApiClient | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    await this.emit(o.release, d.events);
    if (d.action.kind === 'none' || !client) {
      await this.writeStatus(o.release, d.status);
      this.recordExpiry(o.release, d.status);
      return nextStep(d);
    }
    try {
      return d.action.kind === 'start'
        ? await this.start(o, d.status, client, signal)
        : await this.publish(o, d.status, d.action, client, signal);
    } catch (e) {
      // Aborted because this process stopped leading: the new leader reconciles; write nothing.
      if (signal?.aborted) throw e;
      return this.fail(o, d.status, classifyError(e, secretRefText(o.release)), e);
    }
  }

  private async start(
    o: Observed,
    status: Status,
    client: AdminApiClient,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    const { spec } = o.release;
    // Only the wait for a request slot may be aborted: a start cut short could leave a job unrecorded.
    const started = await client.startExport(
      {
        domain: spec.domain,
        ...(spec.export?.versionLabel ? { version: spec.export.versionLabel } : {}),
        ...(spec.export?.paths ? { paths: spec.export.paths } : {}),
      },
      signal ? { slotSignal: signal } : {},
    );
    // First thing after the job exists: its id goes to status, so a restart resumes this job.
    const next = afterStart(
      { ...o, release: { ...o.release, status } },
      started.jobId,
      started.status ?? 'queued',
    );
    await this.writeStatus(o.release, next.status);
    await this.emit(o.release, next.events);
    return { requeueAfterMs: 1_000 };
  }

  private async publish(
    o: Observed,
    status: Status,
    action: Extract<Action, { kind: 'publish' }>,
    client: AdminApiClient,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    const release = { ...o.release, status };
    const bundle = await client.generateBundle(action.jobId, { signal });
    let version = status.current?.version ?? '';
    if (action.mode === 'NewContent' || action.mode === 'Pin') {
      const dest = join(this.o.workDir, `${release.metadata.uid}-${randomBytes(4).toString('hex')}`);
      try {
        const fetched = await fetchBundle({
          url: bundle.bundleUrl,
          dest,
          ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
          ...(action.expectVersion ? { expectVersion: action.expectVersion } : {}),
          renewUrl: async () => (await client.generateBundle(action.jobId, { signal })).bundleUrl,
          logger: this.o.logger,
          ...(signal ? { signal } : {}),
        });
        version = fetched.version;
        this.o.metrics?.bundleBytes(fetched.sizeBytes);
      } finally {
        await rm(dest, { recursive: true, force: true });
      }
    }
    const unchanged = action.mode === 'NewContent' && version === status.current?.version;
    const wrote = unchanged
      ? false
      : await this.writeTarget(release, { bundleUrl: bundle.bundleUrl, version });
    const next = afterPublish(
      { ...o, release },
      {
        mode: action.mode,
        jobId: action.jobId,
        version,
        expiresAt: bundle.expiresAt,
        wrote,
        ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
      },
    );
    await this.writeStatus(o.release, next.status);
    await this.emit(o.release, next.events);
    if (action.mode === 'NewContent' && status.export?.startedAt) {
      this.o.metrics?.exportFinished(
        (o.now.getTime() - Date.parse(status.export.startedAt)) / 1000,
        'completed',
      );
    }
    this.recordExpiry(o.release, next.status);
    const renewal = next.status.current?.renewalTime;
    return renewal ? { requeueAfterMs: Math.max(1_000, Date.parse(renewal) - o.now.getTime()) } : {};
  }

  /** The version the target holds now (undefined: absent or not ours). */
  private async targetVersion(release: StaticExportRelease): Promise<string | undefined> {
    const t = release.spec.target.valuesSecret;
    if (!t) return release.status?.current?.version;
    const observed = await observeValuesSecret(this.o.kube, release, t);
    return observed.ownedByRelease && observed.values !== undefined ? observed.version : undefined;
  }

  private async writeTarget(release: StaticExportRelease, values: { bundleUrl: string; version: string }) {
    const target = release.spec.target;
    if (target.valuesSecret) {
      return writeValuesSecret(
        this.o.kube,
        release,
        { name: target.valuesSecret.name, key: target.valuesSecret.key },
        values,
      );
    }
    const kind = Object.keys(target)[0] ?? 'unknown';
    throw new TargetError(
      `spec.target.${kind} is not supported by this operator version yet; use spec.target.valuesSecret`,
    );
  }

  private async fail(o: Observed, status: Status, f: Failure, cause: unknown): Promise<ReconcileResult> {
    this.o.logger.warn(
      { release: `${o.release.metadata.namespace}/${o.release.metadata.name}`, reason: f.reason, err: cause },
      f.message,
    );
    await this.writeStatus(o.release, withFailure(status, f, o.release.metadata.generation, o.now));
    await this.emit(o.release, [failureEvent(f)]);
    return afterFailure(f);
  }

  private writeStatus(obj: StaticExportRelease, status: Status): Promise<void> {
    return writeStatus(this.o.kube, SER_PLURAL, obj, status);
  }

  private emit(obj: StaticExportRelease, events: EventNote[]): Promise<void> {
    return emitEvents(this.o.events, obj, events);
  }

  private recordExpiry(release: StaticExportRelease, status: Status): void {
    const expires = status.current?.expiresAt;
    this.o.metrics?.linkExpiry(
      release.metadata.namespace ?? '',
      release.metadata.name ?? '',
      expires ? new Date(expires) : undefined,
    );
  }
}

function secretRefText(release: StaticExportRelease): string {
  const ref = release.spec.credentialsSecretRef;
  return `${release.metadata.namespace}/${ref.name} (key ${ref.key})`;
}
