// The operator process: composes both controllers (each wires itself in its *-setup.ts) behind
// leader election, with the admin API clients, events, metrics, health endpoints and the trigger.

import { hostname } from 'node:os';
import { join } from 'node:path';
import { AgentJobBudget, DEFAULT_API_REQUESTS_PER_MINUTE } from '../api/index.ts';
import { BUNDLE_CACHE_DIR, BundleCache, DEFAULT_BUNDLE_CACHE_ENTRIES } from '../bundle/index.ts';
import {
  type AgentJob,
  AJ_KIND,
  GROUP_VERSION,
  SER_KIND,
  SER_PLURAL,
  type StaticExportRelease,
} from '../crd/index.ts';
import type { Logger } from '../log.ts';
import { EventRecorder, refTo } from '../runtime/events.ts';
import { startHealthServer } from '../runtime/health.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { KubeClient } from '../runtime/kube-client.ts';
import { LeaderElector } from '../runtime/leader-election.ts';
import { Metrics } from '../runtime/metrics.ts';
import type { WorkQueueOptions } from '../runtime/work-queue.ts';
import { DEFAULT_TRIGGER_REQUESTS_PER_MINUTE } from '../trigger/contract.ts';
import { startTriggerReceiver } from '../trigger/receiver.ts';
import type { UrlPolicy } from '../url-allow-list.ts';
import { setupAgentJobs } from './agent-job/agent-job-setup.ts';
import { registerBudgetMetrics } from './budget-metrics.ts';
import { ApiClients } from './credentials.ts';
import { registerReleaseMetrics } from './release-metrics.ts';
import { StartBudgets } from './static-export-release/budget/start-budget.ts';
import { DEFAULT_TUNABLES, type Tunables } from './static-export-release/release-model.ts';
import type { BundleDownloadSettings } from './static-export-release/release-options.ts';
import { setupReleases } from './static-export-release/release-setup.ts';
import type { EventSink } from './types.ts';
import { Wiring } from './wiring.ts';

interface OperatorConfig {
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
  /** The repositories spec.gitWriteBack may push to (--allowed-git-urls): see gitUrlAllowed. */
  gitUrls?: UrlPolicy;
  keyPrefix?: string;
  /** Agent job creations per project and hour (the platform allows 100). */
  agentJobsPerHour?: number;
  /** Admin API requests per key and minute (the platform allows about 100). Default 90; 0: no limit. */
  apiRequestsPerMinute?: number;
  /** Export starts per hour of a start budget group whose releases name no share (default 10, the organization's). */
  startBudgetPerHour?: number;
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
  /** The release decisions' delays (DEFAULT_TUNABLES where not given): a start's outcome wait, the export retry and deadline. */
  tunables?: Partial<Tunables>;
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
    onCall: (_operation, status, ms, endpoint) => metrics.observeAdminApiCall(endpoint, status, ms / 1000),
  });
  // Export starts of the current API, per organization and hour: counted across terms of leadership.
  const budgets = new StartBudgets(
    cfg.startBudgetPerHour === undefined ? {} : { limit: cfg.startBudgetPerHour },
  );
  registerBudgetMetrics(metrics, clients, budgets);
  // The releases in the cache of the reconcilers running now (none while not leading).
  let cachedReleases: () => readonly StaticExportRelease[] = () => [];
  registerReleaseMetrics(metrics, () => cachedReleases());
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
  // Creations before this process started count against the hourly limit too: seed the shared
  // budget from the AgentJobs' own records once their informer has synced.
  let seedBudget: (jobs: readonly AgentJob[]) => void = () => {};
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
    budgets,
    events,
    logger: log,
    cache,
    ...(cfg.gitUrls ? { gitUrls: cfg.gitUrls } : {}),
    ...(cfg.download ? { download: cfg.download } : {}),
    ...(cfg.tunables ? { tunables: { ...DEFAULT_TUNABLES, ...cfg.tunables } } : {}),
    metrics: {
      exportFinished: (seconds: number, result: 'completed' | 'failed') =>
        metrics.exportDuration.observe({ result }, seconds),
    },
  };

  function startReconcilers(): Reconcilers {
    const w = new Wiring({
      kube,
      logger: log,
      metrics,
      namespaces: cfg.namespaces,
      concurrency: cfg.concurrency,
      ...(cfg.queue ? { queue: cfg.queue } : {}),
      ...(cfg.watchdogMs ? { watchdogMs: cfg.watchdogMs } : {}),
      ...(cfg.resyncMs ? { resyncMs: cfg.resyncMs } : {}),
    });
    const releases = setupReleases(w, releaseOptions);
    const agentJobs = setupAgentJobs(w, {
      kube,
      clients,
      events,
      logger: log,
      budgetSeeded,
      onSynced: (jobs) => seedBudget(jobs),
    });
    const releaseCache = w.cacheOf<StaticExportRelease & KubeObject>(GROUP_VERSION, SER_PLURAL);
    cachedReleases = () => releaseCache?.list() ?? [];
    // A changed key Secret may hold a new key: the client of the old one is closed once unused.
    w.secrets.onChange((type, secret) => {
      if (type === 'MODIFIED' || type === 'DELETED')
        clients.secretChanged(secret.metadata.namespace ?? '', secret.metadata.name);
    });
    for (const i of w.informers) i.start();
    log.info(
      { namespaces: cfg.namespaces.length ? cfg.namespaces : 'all', kinds: [SER_KIND, AJ_KIND] },
      'controllers started',
    );
    return {
      synced: () => w.informers.every((i) => i.hasSynced()),
      async stop(drainMs) {
        cachedReleases = () => [];
        await Promise.all([releases.stop(drainMs), agentJobs.stop(drainMs)]);
        await Promise.all(w.informers.map((i) => i.stop()));
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
  // Needs no leadership, so it watches the releases itself: the reconcilers' caches exist only
  // while leading.
  const trigger = cfg.trigger
    ? await startTriggerReceiver({
        host: cfg.trigger.host,
        port: cfg.trigger.port,
        kube,
        logger: log,
        events,
        namespaces: cfg.namespaces,
        requestsPerMinute: cfg.trigger.requestsPerMinute ?? DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
        ...(cfg.watchdogMs ? { watchdogMs: cfg.watchdogMs } : {}),
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
