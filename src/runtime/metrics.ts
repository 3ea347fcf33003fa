// The operator's Prometheus metrics in one registry per `Metrics` instance, so tests (and two
// operators in one process) do not share global state.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

interface MetricsOptions {
  /** Node process metrics (heap, event loop lag, fds). Default true. */
  processMetrics?: boolean;
  prefix?: string;
}

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const API_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const EXPORT_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];

export class Metrics {
  readonly registry = new Registry();
  /** Every metric name starts with it (`static_export_` by default). */
  readonly prefix: string;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileDuration: Histogram<'controller'>;
  readonly queueDepth: Gauge<'controller'>;
  readonly adminApiCalls: Counter<'endpoint' | 'code'>;
  readonly adminApiDuration: Histogram<'endpoint'>;
  readonly exportDuration: Histogram<'result'>;
  readonly bundleBytes: Counter;
  readonly watchRestarts: Counter<'resource'>;
  readonly watchRelists: Counter<'resource'>;
  private readonly queues = new Map<string, () => number>();

  constructor(options: MetricsOptions = {}) {
    const p = options.prefix ?? 'static_export_';
    this.prefix = p;
    const registers = [this.registry];
    const queues = this.queues;
    this.reconcileTotal = new Counter({
      name: `${p}reconcile_total`,
      help: 'Reconciles by controller and result (success, requeue, error).',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: `${p}reconcile_errors_total`,
      help: 'Reconciles that failed and were re-queued with backoff.',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: `${p}reconcile_duration_seconds`,
      help: 'Reconcile duration.',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.queueDepth = new Gauge({
      name: `${p}workqueue_depth`,
      help: 'Keys waiting in the work queue (not counting delayed or in-progress ones).',
      labelNames: ['controller'],
      registers,
      // Read at scrape time, so the queue needs no metrics hook on every add.
      collect() {
        for (const [controller, len] of queues) this.set({ controller }, len());
      },
    });
    this.adminApiCalls = new Counter({
      name: `${p}admin_api_requests_total`,
      help: 'Admin API requests (every attempt) by endpoint (method and route template) and HTTP status code, or network/timeout when no response arrived.',
      labelNames: ['endpoint', 'code'],
      registers,
    });
    this.adminApiDuration = new Histogram({
      name: `${p}admin_api_request_duration_seconds`,
      help: 'Admin API request duration by endpoint (method and route template).',
      labelNames: ['endpoint'],
      buckets: API_BUCKETS,
      registers,
    });
    this.exportDuration = new Histogram({
      name: `${p}export_duration_seconds`,
      help: 'Time from starting an export job until its bundle was verified, by result.',
      labelNames: ['result'],
      buckets: EXPORT_BUCKETS,
      registers,
    });
    this.bundleBytes = new Counter({
      name: `${p}bundle_bytes_total`,
      help: 'Bundle bytes downloaded.',
      registers,
    });
    this.watchRestarts = new Counter({
      name: `${p}watch_restarts_total`,
      help: 'Watch streams restarted (errors, stream end, watchdog).',
      labelNames: ['resource'],
      registers,
    });
    this.watchRelists = new Counter({
      name: `${p}watch_relists_total`,
      help: 'Full re-lists (410 Gone, watchdog, recovery after errors).',
      labelNames: ['resource'],
      registers,
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: p });
  }

  /** Reports `len()` of a controller's queue as its depth. */
  trackQueue(controller: string, queue: { len(): number }): void {
    this.queues.set(controller, () => queue.len());
  }

  untrackQueue(controller: string): void {
    this.queues.delete(controller);
    this.queueDepth.remove({ controller });
  }

  /** One reconcile's outcome. */
  observeReconcile(controller: string, result: 'success' | 'requeue' | 'error', seconds: number): void {
    this.reconcileTotal.inc({ controller, result });
    if (result === 'error') this.reconcileErrors.inc({ controller });
    this.reconcileDuration.observe({ controller }, seconds);
  }

  /** One admin API request: `endpoint` is a route template, `code` the HTTP status or network/timeout. */
  observeAdminApiCall(endpoint: string, code: number | 'network' | 'timeout', seconds: number): void {
    this.adminApiCalls.inc({ endpoint, code: String(code) });
    this.adminApiDuration.observe({ endpoint }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
