// The operator process: both controllers wired to the runtime (informers -> work queues ->
// reconcilers), behind leader election, with events, metrics and health endpoints.

import { hostname } from 'node:os';
import { join } from 'node:path';
import { AgentJobBudget, DEFAULT_API_REQUESTS_PER_MINUTE } from '../api/index.ts';
import { BUNDLE_CACHE_DIR, BundleCache, DEFAULT_BUNDLE_CACHE_ENTRIES } from '../bundle/index.ts';
import {
  type AgentJob,
  AJ_KIND,
  AJ_PLURAL,
  API_GROUP,
  GROUP_VERSION,
  SER_KIND,
  SER_PLURAL,
  type StaticExportRelease,
} from '../crd/index.ts';
import type { Logger } from '../log.ts';
import { CachedReader, type CacheSource } from '../runtime/cached-reader.ts';
import {
  allKeys,
  type Controller,
  cancelOnDelete,
  enqueueOnChange,
  ignoreStatusOnly,
  ownerKeys,
  ownKey,
  referrerKeys,
  refIndex,
  runController,
  splitKey,
} from '../runtime/controller.ts';
import { EventRecorder, refTo } from '../runtime/events.ts';
import { startHealthServer } from '../runtime/health.ts';
import { Informer, type KubeObject, type ListWatchClient } from '../runtime/informer.ts';
import { KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { LeaderElector } from '../runtime/leader-election.ts';
import { Metrics } from '../runtime/metrics.ts';
import type { WorkQueueOptions } from '../runtime/work-queue.ts';
import type { OwnedObject } from '../targets/owned.ts';
import { VALUES_SECRET_LABEL, WORKLOAD_KINDS } from '../targets/workloads.ts';
import { DEFAULT_TRIGGER_REQUESTS_PER_MINUTE } from '../trigger/contract.ts';
import { startTriggerReceiver } from '../trigger/receiver.ts';
import { AgentJobReconciler } from './agent-job/reconciler.ts';
import { ApiClients } from './credentials.ts';
import { DEFAULT_TUNABLES } from './static-export-release/decide.ts';
import {
  type BundleDownloadSettings,
  StaticExportReleaseReconciler,
} from './static-export-release/reconciler.ts';
import { SharedExports } from './static-export-release/shared-exports.ts';
import type { EventSink } from './types.ts';

export interface OperatorConfig {
  logger: Logger;
  /** Kubeconfig file; default chain (KUBECONFIG, ~/.kube/config, in-cluster) otherwise. */
  kubeconfig?: string;
  /** Namespaces to watch; empty for all. */
  namespaces: string[];
  /** Parallel reconciles per controller. */
  concurrency: number;
  metricsHost: string;
  metricsPort: number;
  /** The signed trigger receiver (off when absent); every replica serves it, leading or not. */
  trigger?: { host: string; port: number; requestsPerMinute?: number };
  leaderElection?: {
    namespace: string;
    name: string;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
  };
  /** Admin API base URL for resources that do not set spec.apiBaseUrl. */
  apiBaseUrl?: string;
  /** Further base URLs spec.apiBaseUrl may name (keys go nowhere else). */
  allowedApiBaseUrls?: string[];
  /** Keys may go over plain http to hosts other than loopback. */
  allowInsecureApiBaseUrl?: boolean;
  keyPrefix?: string;
  /** Agent job creations per project and hour (the platform allows 100). */
  agentJobsPerHour?: number;
  /** Admin API requests per key and minute (the platform allows about 100). Default 90; 0: no limit. */
  apiRequestsPerMinute?: number;
  /** Where bundles are downloaded, verified and cached. */
  workDir: string;
  /** Most verification results in the work directory's bundle cache (default DEFAULT_BUNDLE_CACHE_ENTRIES). */
  bundleCacheEntries?: number;
  /** Bundle caps and download deadline for the release reconciler. */
  download?: BundleDownloadSettings;
  identity?: string;
  /** Test and tuning knobs. */
  queue?: WorkQueueOptions;
  watchdogMs?: number;
  resyncMs?: number;
  /** How long a release waits after a start whose answer was never recorded (default 10 min). */
  startOutcomeWaitMs?: number;
  apiRetry?: ConstructorParameters<typeof ApiClients>[0]['retry'];
}

export interface RunningOperator {
  readonly identity: string;
  readonly metricsPort: number;
  /** The trigger receiver's port, when it is on. */
  readonly triggerPort?: number;
  readonly metrics: Metrics;
  isLeader(): boolean;
  /** Drains in-flight reconciles for up to `drainMs` (default 30 s), then aborts them. */
  stop(drainMs?: number): Promise<void>;
}

interface Reconcilers {
  stop(drainMs?: number): Promise<void>;
  synced(): boolean;
}

export async function startOperator(cfg: OperatorConfig): Promise<RunningOperator> {
  const log = cfg.logger;
  const identity = cfg.identity ?? `${hostname()}-${process.pid}`;
  const kube = await KubeClient.create(cfg.kubeconfig);
  const metrics = new Metrics();
  const clients = new ApiClients({
    logger: log,
    ...(cfg.apiBaseUrl ? { apiBaseUrl: cfg.apiBaseUrl } : {}),
    ...(cfg.allowedApiBaseUrls ? { allowedApiBaseUrls: cfg.allowedApiBaseUrls } : {}),
    ...(cfg.allowInsecureApiBaseUrl ? { allowInsecureApiBaseUrl: true } : {}),
    ...(cfg.keyPrefix ? { keyPrefix: cfg.keyPrefix } : {}),
    ...(cfg.apiRetry ? { retry: cfg.apiRetry } : {}),
    budget: new AgentJobBudget({ limit: cfg.agentJobsPerHour ?? 100 }),
    requestsPerMinute: cfg.apiRequestsPerMinute ?? DEFAULT_API_REQUESTS_PER_MINUTE,
    onCall: (operation, status, ms) =>
      metrics.observeAdminApiCall(operation, typeof status === 'number' ? status : undefined, ms / 1000),
  });
  const recorder = new EventRecorder({ client: kube, reportingInstance: identity, logger: log });
  const events: EventSink = {
    emit: (obj, type, reason, note) =>
      recorder.record({ regarding: refTo(obj as KubeObject), type, reason, action: reason, note }),
  };

  // Each process owns its work directory: opening the cache removes anything but its entries.
  const cache = await BundleCache.open({
    dir: join(cfg.workDir, BUNDLE_CACHE_DIR),
    maxEntries: cfg.bundleCacheEntries ?? DEFAULT_BUNDLE_CACHE_ENTRIES,
    logger: log,
    ...(cfg.download?.limits ? { limits: cfg.download.limits } : {}),
    onDownloaded: (bytes) => metrics.bundleBytes.inc(bytes),
  });
  // Releases of a share group are woken when its export starts or ends (by whichever controller runs).
  let wakeRelease: (key: string) => void = () => {};
  const shared = new SharedExports({ wake: (key) => wakeRelease(key) });
  // Creations before this process started count against the hourly limit too: seed the shared
  // budget from the AgentJobs' own records once their informer has synced.
  let seedBudget: (jobs: AgentJob[]) => void = () => {};
  const budgetSeeded = new Promise<void>((resolve) => {
    seedBudget = (jobs) => {
      // Once per process: the budget itself remembers what this process created.
      seedBudget = () => {};
      for (const j of jobs) {
        if (j.status?.jobId && j.status.createdAt)
          clients.budget.recordPast(j.spec.projectId, Date.parse(j.status.createdAt));
      }
      resolve();
    };
  });

  const releaseOptions = {
    kube,
    clients,
    events,
    logger: log,
    cache,
    shared,
    ...(cfg.download ? { download: cfg.download } : {}),
    ...(cfg.startOutcomeWaitMs === undefined
      ? {}
      : { tunables: { ...DEFAULT_TUNABLES, startOutcomeWaitMs: cfg.startOutcomeWaitMs } }),
    metrics: {
      exportFinished: (seconds: number, result: 'completed' | 'failed') =>
        metrics.exportDuration.observe({ result }, seconds),
      linkExpiry: (namespace: string, name: string, expiresAt: Date | undefined) =>
        metrics.setLinkExpiry(namespace, name, expiresAt),
    },
  };

  // Index names: releases (and AgentJobs) by the key Secret they read, releases and labelled
  // workloads by the values Secret they write or read.
  const KEY_SECRET = 'keySecret';
  const REGISTRY_SECRET = 'registrySecret';
  const VALUES_SECRET = 'valuesSecret';
  const DOMAIN = 'domain';

  function startReconcilers(): Reconcilers {
    const informer = <T extends KubeObject>(
      apiVersion: string,
      plural: string,
      client: ListWatchClient = kube,
      labelSelector?: string,
    ) =>
      new Informer<T>({
        client,
        apiVersion,
        plural,
        namespaces: cfg.namespaces,
        ...(labelSelector ? { labelSelector } : {}),
        logger: log,
        metrics,
        ...(cfg.watchdogMs ? { watchdogMs: cfg.watchdogMs } : {}),
        ...(cfg.resyncMs ? { resyncMs: cfg.resyncMs } : {}),
      });
    const controller = (
      name: string,
      reconcile: (ns: string, n: string, signal: AbortSignal) => Promise<{ requeueAfterMs?: number }>,
    ): Controller =>
      runController({
        name,
        concurrency: cfg.concurrency,
        logger: log,
        metrics,
        ...(cfg.queue ? { queue: cfg.queue } : {}),
        reconcile: (key, signal) => {
          const { namespace, name: n } = splitKey(key);
          return reconcile(namespace ?? '', n, signal);
        },
      });

    const serInformer = informer<StaticExportRelease & KubeObject>(GROUP_VERSION, SER_PLURAL);
    const ajInformer = informer<AgentJob & KubeObject>(GROUP_VERSION, AJ_PLURAL);
    // Secrets' metadata only (never their data): a values Secret deleted or edited is repaired, and
    // a key Secret created or fixed is used at once rather than at the next retry.
    const secretInformer = informer<KubeObject>('v1', 'secrets', kube.metadataOnly());
    const keySecret = (r: StaticExportRelease | AgentJob) => r.spec.credentialsSecretRef?.name;
    serInformer.addIndex(KEY_SECRET, refIndex<StaticExportRelease & KubeObject>(keySecret));
    ajInformer.addIndex(KEY_SECRET, refIndex<AgentJob & KubeObject>(keySecret));
    // A registry source's login, CA or public key Secret created or fixed: used at once.
    serInformer.addIndex(REGISTRY_SECRET, (r: StaticExportRelease & KubeObject) => {
      const oci = r.spec.source?.oci;
      return [oci?.credentialsSecretRef?.name, oci?.caSecretRef?.name, oci?.verify?.publicKeySecretRef.name]
        .filter((n): n is string => n !== undefined)
        .map((n) => `${r.metadata.namespace}/${n}`);
    });
    // The site chart's workloads, by the label naming the Secret they read (metadata only): one
    // installed or changed (helm upgrade) is rolled or checked at once, not at the next renewal.
    const workloadInformers = WORKLOAD_KINDS.map((kind) => {
      const wi = informer<KubeObject>(
        'apps/v1',
        `${kind.toLowerCase()}s`,
        kube.metadataOnly(),
        VALUES_SECRET_LABEL,
      );
      wi.addIndex(
        VALUES_SECRET,
        refIndex((w) => w.metadata.labels?.[VALUES_SECRET_LABEL]),
      );
      return { kind, informer: wi };
    });
    serInformer.addIndex(
      VALUES_SECRET,
      refIndex<StaticExportRelease & KubeObject>((r) => r.spec.target?.valuesSecret?.name),
    );
    // Releases by domain, across namespaces: one about to export finds the job in flight another
    // release of its site records (after a restart) among those alone.
    serInformer.addIndex(DOMAIN, (r) => (typeof r.spec?.domain === 'string' ? [r.spec.domain] : []));

    // Reads come from these informers' caches (one GET per reconcile each before).
    const secretReads = new CachedReader<KubeObject & OwnedObject>({
      informer: secretInformer,
      full: false,
      fetch: (ns, n, signal) => kube.get(resourcePath('v1', 'secrets', ns, n), signal),
    });
    const reads = (own: CacheSource, plural: string) => ({
      objects: new CachedReader<KubeObject>({
        informer: own,
        full: true,
        fetch: (ns, n, signal) => kube.get(resourcePath(GROUP_VERSION, plural, ns, n), signal),
      }),
      secrets: secretReads,
    });
    const releases = new StaticExportReleaseReconciler({
      ...releaseOptions,
      reads: reads(serInformer, SER_PLURAL),
      releasesOfDomain: (domain) =>
        serInformer.hasSynced() ? serInformer.byIndex(DOMAIN, domain) : undefined,
      labelledWorkloads: (kind, namespace, valuesSecret) =>
        workloadInformers.some(
          (w) =>
            w.kind === kind &&
            (!w.informer.hasSynced() ||
              w.informer.byIndex(VALUES_SECRET, `${namespace}/${valuesSecret}`).length > 0),
        ),
    });
    const agentJobs = new AgentJobReconciler({
      kube,
      clients,
      events,
      logger: log,
      budgetSeeded,
      reads: reads(ajInformer, AJ_PLURAL),
    });
    const serController = controller('staticexportrelease', (ns, n, signal) =>
      releases.reconcile(ns, n, signal),
    );
    const ajController = controller('agentjob', (ns, n, signal) => agentJobs.reconcile(ns, n, signal));
    wakeRelease = (key) => serController.enqueue(key);
    enqueueOnChange(serInformer, serController, ownKey, ignoreStatusOnly);
    cancelOnDelete(serInformer, serController);
    enqueueOnChange(
      secretInformer,
      serController,
      allKeys(
        ownerKeys(SER_KIND, API_GROUP),
        referrerKeys(serInformer, KEY_SECRET),
        referrerKeys(serInformer, REGISTRY_SECRET),
      ),
    );
    enqueueOnChange(ajInformer, ajController, ownKey, ignoreStatusOnly);
    cancelOnDelete(ajInformer, ajController);
    enqueueOnChange(secretInformer, ajController, referrerKeys(ajInformer, KEY_SECRET));
    // A changed key Secret may hold a new key: the client of the old one is closed once unused.
    secretInformer.onChange((type, secret) => {
      if (type === 'MODIFIED' || type === 'DELETED')
        clients.secretChanged(secret.metadata.namespace ?? '', secret.metadata.name);
    });
    const readers = referrerKeys(serInformer, VALUES_SECRET);
    // A workload's label names the Secret: the releases writing it are its readers.
    for (const w of workloadInformers)
      enqueueOnChange(
        w.informer,
        serController,
        (obj) =>
          readers({
            metadata: {
              namespace: obj.metadata.namespace,
              name: obj.metadata.labels?.[VALUES_SECRET_LABEL] ?? '',
            },
          }),
        ignoreStatusOnly,
      );
    const informers = [serInformer, ajInformer, secretInformer, ...workloadInformers.map((w) => w.informer)];
    for (const i of informers) i.start();
    void ajInformer.waitForSync().then(() => seedBudget(ajInformer.list()));
    log.info(
      { namespaces: cfg.namespaces.length ? cfg.namespaces : 'all', kinds: [SER_KIND, AJ_KIND] },
      'controllers started',
    );
    return {
      synced: () => informers.every((i) => i.hasSynced()),
      async stop(drainMs) {
        await Promise.all([serController.stop(drainMs), ajController.stop(drainMs)]);
        await Promise.all(informers.map((i) => i.stop()));
      },
    };
  }

  let running: Reconcilers | undefined;
  const shutdown = new AbortController();
  let elector: LeaderElector | undefined;
  let campaign: Promise<void> | undefined;
  if (cfg.leaderElection) {
    const le = cfg.leaderElection;
    elector = new LeaderElector({ client: kube, identity, logger: log, ...le });
    campaign = elector.run(
      {
        onStartedLeading(signal) {
          running = startReconcilers();
          // Leadership lost: stop reconciling at once (in-flight reconciles are aborted).
          signal.addEventListener('abort', () => {
            const stopping = running;
            running = undefined;
            void stopping?.stop(0);
          });
        },
      },
      shutdown.signal,
    );
  } else {
    running = startReconcilers();
  }

  const health = await startHealthServer({
    host: cfg.metricsHost,
    port: cfg.metricsPort,
    registry: metrics.registry,
    ready: () =>
      elector
        ? elector.healthy() && (!elector.isLeader() || (running?.synced() ?? false))
        : (running?.synced() ?? false),
  });
  // Only reads a release and its token Secret and sets an annotation: no leadership needed.
  const trigger = cfg.trigger
    ? await startTriggerReceiver({
        host: cfg.trigger.host,
        port: cfg.trigger.port,
        kube,
        logger: log,
        events,
        namespaces: cfg.namespaces,
        requestsPerMinute: cfg.trigger.requestsPerMinute ?? DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
      })
    : undefined;
  log.info(
    {
      identity,
      metricsPort: health.port,
      ...(trigger ? { triggerPort: trigger.port } : {}),
      leaderElection: Boolean(elector),
    },
    'operator started',
  );

  return {
    identity,
    metricsPort: health.port,
    ...(trigger ? { triggerPort: trigger.port } : {}),
    metrics,
    isLeader: () => (elector ? elector.isLeader() : true),
    async stop(drainMs) {
      await trigger?.close();
      await running?.stop(drainMs);
      running = undefined;
      shutdown.abort();
      await campaign;
      await health.close();
      await clients.close();
      await kube.close();
    },
  };
}
