// The sync loop: serves the version the Secret asks for. A new version is fetched beside the served
// one and swapped in; a kept one is swapped in at once; a failed fetch keeps the served version,
// is reported, and is retried with backoff until it succeeds or a newer Secret value supersedes it.
import { scrub } from '../redact.ts';
import { backoff, wait } from '../timers.ts';
import { nextStep, type SyncStep, versionsToRemove } from './plan.ts';
import { type ConditionSink, conditionFor, type SyncOutcome } from './reporter.ts';
import type { WantedContent } from './secret.ts';
import type { VersionStore } from './store.ts';

/** Fetches `wanted` into `dest` with every check; a refusal throws and leaves nothing at `dest`. */
type FetchInto = (wanted: WantedContent, dest: string, signal: AbortSignal) => Promise<void>;

export type SecretState = { wanted: WantedContent } | { problem: string };

interface SyncerOptions {
  store: VersionStore;
  /** Versions kept on disk, the served one included. */
  keep: number;
  fetch: FetchInto;
  reporter?: ConditionSink;
  /** One line per swap and per failure. */
  log: (line: string) => void;
  /** First retry delay after a failed fetch, doubled up to `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

export class Syncer {
  private readonly o: SyncerOptions;
  private latest: SecretState | undefined;
  private latestKey = '';
  private wake: (() => void) | undefined;
  private inflight: { version: string; controller: AbortController } | undefined;
  private reported = '';

  constructor(options: SyncerOptions) {
    this.o = options;
  }

  /** Makes the served version the wanted one: fetched if needed, swapped, older versions pruned. */
  async syncTo(wanted: WantedContent, signal: AbortSignal): Promise<SyncStep> {
    const { store } = this.o;
    const step = nextStep(await store.served(), await store.kept(), wanted.version);
    if (step.kind === 'fetch') {
      await this.o.fetch(wanted, store.stagingDir(step.version), signal);
      await store.install(step.version);
    }
    if (step.kind !== 'serving') await store.swap(step.version);
    for (const old of versionsToRemove(await store.kept(), wanted.version, this.o.keep))
      await store.remove(old);
    return step;
  }

  /** The Secret's latest state (from the watch); a different version stops a fetch of an older one. */
  want(state: SecretState): void {
    const key = JSON.stringify(state);
    // A resync or an unrelated update of the same content changes nothing.
    if (key === this.latestKey) return;
    this.latest = state;
    this.latestKey = key;
    if (this.inflight && ('problem' in state || state.wanted.version !== this.inflight.version)) {
      this.inflight.controller.abort();
    }
    this.wake?.();
  }

  /** Outcomes go to the pod condition once each (not again on every resync). */
  async report(outcome: SyncOutcome): Promise<void> {
    const condition = conditionFor(outcome);
    const key = JSON.stringify(condition);
    if (key === this.reported || !this.o.reporter) return;
    this.reported = key;
    await this.o.reporter.report(condition);
  }

  /** Follows `want` until `stop` aborts. */
  async run(stop: AbortSignal): Promise<void> {
    const base = this.o.retryBaseMs ?? 2_000;
    const max = this.o.retryMaxMs ?? 300_000;
    let failures = 0;
    while (!stop.aborted) {
      const state = this.latest;
      if (state === undefined) {
        await this.changed(stop);
        continue;
      }
      if ('problem' in state) {
        const served = await this.o.store.served();
        this.o.log(`${served === undefined ? 'serving nothing' : `serving ${served}`}; ${state.problem}`);
        await this.report({ kind: 'secretUnusable', served, problem: state.problem });
        if (this.latest === state) await this.changed(stop);
        continue;
      }
      const { version } = state.wanted;
      const controller = new AbortController();
      this.inflight = { version, controller };
      try {
        const step = await this.syncTo(state.wanted, AbortSignal.any([stop, controller.signal]));
        failures = 0;
        if (step.kind === 'fetch') this.o.log(`serving ${version} (fetched)`);
        if (step.kind === 'swap') this.o.log(`serving ${version} (kept on disk, no download)`);
        await this.report({ kind: 'serving', version });
        if (this.latest === state) await this.changed(stop);
      } catch (error) {
        if (stop.aborted) break;
        // Superseded by a newer Secret value: that one is synced next.
        if (controller.signal.aborted) continue;
        const served = await this.o.store.served();
        const cause = error instanceof Error ? error.message : String(error);
        const delay = backoff(failures++, { base, max });
        this.o.log(
          scrub(
            `${version} failed: ${cause}; still serving ${served ?? 'nothing'}; retrying in ${Math.round(delay / 1000)}s`,
          ),
        );
        await this.report({ kind: 'fetchFailed', served, version, cause });
        if (this.latest === state) await this.changed(stop, delay);
      } finally {
        this.inflight = undefined;
      }
    }
  }

  /** Resolves on the next `want`, on `stop`, or after `ms`. */
  private async changed(stop: AbortSignal, ms = 2 ** 31 - 1): Promise<void> {
    const woken = new AbortController();
    this.wake = () => woken.abort();
    try {
      await wait(ms, stop, woken.signal);
    } finally {
      this.wake = undefined;
    }
  }
}
