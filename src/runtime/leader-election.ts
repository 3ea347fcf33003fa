// Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection:
// - a candidate takes the Lease when it is absent, released (no holder) or expired, using the
//   resourceVersion for optimistic concurrency (PUT) or create (POST) so only one wins;
// - expiry is judged by when *this* process last saw the record change, not by the holder's
//   renewTime, so clock skew between pods does not matter;
// - the leader renews every retryPeriod; when no renewal succeeded for renewDeadline it aborts
//   the leading signal at once (stop reconciling) — before the lease can expire for others;
// - `release` on shutdown empties the holder so a standby takes over at its next retry.
// After losing leadership the elector becomes a candidate again.
import { hostname } from 'node:os';
import type { Logger } from '../log.ts';
import { type LongTimer, setLongTimeout, timeoutSignal, wait } from '../timers.ts';
import { isConflict, isNotFound, type KubeClient, resourcePath } from './kube-client.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

interface LeaderElectorOptions {
  client: Pick<KubeClient, 'request'>;
  namespace: string;
  name: string;
  /** Default: hostname plus a random suffix (unique per process). */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger?: Logger;
}

interface LeaderCallbacks {
  /** Called on becoming leader; `signal` aborts the moment leadership is lost or given up. */
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits (the server rejects three). */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly identity: string;
  private readonly opts: LeaderElectorOptions;
  private readonly path: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed: { record: string; at: number; holder: string } | undefined;
  private leading: AbortController | undefined;
  private lastContact = 0;

  constructor(options: LeaderElectorOptions) {
    this.opts = options;
    this.identity = options.identity ?? `${hostname()}_${Math.random().toString(36).slice(2, 10)}`;
    this.path = resourcePath('coordination.k8s.io/v1', 'leases', options.namespace, options.name);
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs)
      throw new Error('renewDeadline must be below leaseDuration');
  }

  isLeader(): boolean {
    return this.leading !== undefined;
  }

  /** The holder this process last saw ('' when released or never seen). */
  currentLeader(): string {
    return this.observed?.holder ?? '';
  }

  /** Leading, or standing by with a recent successful read of the Lease (for /readyz). */
  healthy(now = Date.now()): boolean {
    return this.isLeader() || now - this.lastContact < this.leaseDurationMs + this.retryPeriodMs * 2;
  }

  /** Campaigns, leads and campaigns again after a loss, until `signal` aborts; then releases. */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    const log = this.opts.logger?.child({
      lease: `${this.opts.namespace}/${this.opts.name}`,
      identity: this.identity,
    });
    while (!signal.aborted) {
      if (!(await this.tryAcquireOrRenew(signal, callbacks))) {
        await wait(this.retryPeriodMs * (1 + Math.random() * 0.2), signal);
        continue;
      }
      log?.info('became leader');
      const leading = new AbortController();
      this.leading = leading;
      callbacks.onStartedLeading(leading.signal);
      await this.renewLoop(leading, signal, callbacks);
      this.leading = undefined;
      if (!leading.signal.aborted) leading.abort();
      if (signal.aborted) {
        await this.release();
        log?.info('released the lease');
      } else {
        log?.warn('lost leadership; stopped reconciling');
      }
      callbacks.onStoppedLeading?.();
    }
  }

  /** Gives up the lease if held, so a standby need not wait for expiry. Never throws. */
  async release(): Promise<boolean> {
    try {
      const lease = await this.read(timeoutSignal(this.renewDeadlineMs));
      if (!lease || lease.spec.holderIdentity !== this.identity) return false;
      const now = microTime(new Date());
      lease.spec = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      };
      await this.opts.client.request('PUT', this.path, {
        body: lease,
        signal: timeoutSignal(this.renewDeadlineMs),
      });
      return true;
    } catch (err) {
      this.opts.logger?.warn({ err }, 'could not release the lease');
      return false;
    }
  }

  /** Renews every retryPeriod; returns when leadership is lost (deadline, taken) or `stop` aborts. */
  private async renewLoop(
    leading: AbortController,
    stop: AbortSignal,
    callbacks: LeaderCallbacks,
  ): Promise<void> {
    let deadline: LongTimer | undefined;
    const arm = () => {
      deadline?.clear();
      // Abort the moment the deadline passes, even while a renewal request is still hanging.
      deadline = setLongTimeout(() => leading.abort(), this.renewDeadlineMs);
    };
    arm();
    try {
      while (!stop.aborted && !leading.signal.aborted) {
        await wait(this.retryPeriodMs, stop, leading.signal);
        if (stop.aborted || leading.signal.aborted) return;
        const requestSignal = AbortSignal.any([leading.signal, timeoutSignal(this.renewDeadlineMs)]);
        const renewed = await this.tryAcquireOrRenew(requestSignal, callbacks);
        if (renewed) arm();
        else if (this.observed && this.observed.holder !== this.identity) leading.abort(); // taken over
      }
    } finally {
      deadline?.clear();
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    const now = microTime(new Date());
    try {
      const lease = await this.read(signal);
      this.lastContact = Date.now();
      const leaseDurationSeconds = Math.ceil(this.leaseDurationMs / 1000);
      if (!lease) {
        await this.opts.client.request(
          'POST',
          resourcePath('coordination.k8s.io/v1', 'leases', this.opts.namespace),
          {
            body: {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name: this.opts.name, namespace: this.opts.namespace },
              spec: {
                holderIdentity: this.identity,
                leaseDurationSeconds,
                acquireTime: now,
                renewTime: now,
                leaseTransitions: 0,
              },
            } satisfies Lease,
            signal,
          },
        );
        this.observe(this.identity, `${this.identity}|${now}`, callbacks);
        return true;
      }
      const spec = lease.spec;
      const holder = spec.holderIdentity ?? '';
      this.observe(holder, `${holder}|${spec.renewTime ?? ''}|${spec.leaseDurationSeconds ?? ''}`, callbacks);
      const observedAt = this.observed?.at ?? 0;
      const heldByOther = holder !== '' && holder !== this.identity;
      const duration = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
      if (heldByOther && observedAt + duration > Date.now()) return false;
      lease.spec = {
        holderIdentity: this.identity,
        leaseDurationSeconds,
        acquireTime: holder === this.identity ? spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1),
      };
      // PUT carries metadata.resourceVersion: a concurrent writer makes this a 409.
      await this.opts.client.request('PUT', this.path, { body: lease, signal });
      this.observe(this.identity, `${this.identity}|${now}`, callbacks);
      return true;
    } catch (err) {
      if (!isConflict(err)) this.opts.logger?.debug({ err }, 'lease acquire/renew failed');
      return false;
    }
  }

  private read(signal: AbortSignal): Promise<Lease | undefined> {
    return this.opts.client.request<Lease>('GET', this.path, { signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  }

  private observe(holder: string, record: string, callbacks: LeaderCallbacks): void {
    if (this.observed?.record === record) return;
    const changedHolder = this.observed?.holder !== holder;
    this.observed = { record, at: Date.now(), holder };
    if (changedHolder && holder) callbacks.onNewLeader?.(holder);
  }
}
