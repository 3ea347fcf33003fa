// Kubernetes Events (events.k8s.io/v1) for each step a controller takes. Like client-go's
// events broadcaster, a repeat of the same (object, type, reason, action, note) within a window
// updates the first Event's `series` instead of creating another. Recording never throws: an
// Event is a courtesy, and a reconcile must not fail because one could not be written.
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../log.ts';
import { scrub } from '../redact.ts';
import type { KubeObject } from './informer.ts';
import { isNotFound, type KubeClient, resourcePath } from './kube-client.ts';
import { microTime } from './leader-election.ts';

export const REPORTING_CONTROLLER = 'staticexport.dev/operator';
const NOTE_MAX_BYTES = 1024;
const CACHE_MAX = 4096;

interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** The object an Event is about, as a controller holds it. */
export interface EventRegarding {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Where Events go (the EventRecorder in the operator); `R`: the reasons the writer may give. */
export interface EventSink<R extends string = string> {
  emit(regarding: EventRegarding, type: 'Normal' | 'Warning', reason: R, note: string): Promise<void>;
}

interface EventInput {
  regarding: ObjectReference;
  type: 'Normal' | 'Warning';
  /** One UpperCamelCase word, e.g. `ExportStarted`. */
  reason: string;
  /** What the controller did or failed to do, e.g. `StartExport`. */
  action: string;
  note: string;
}

interface EventRecorderOptions {
  client: Pick<KubeClient, 'create' | 'mergePatch'>;
  /** The pod name (or leader identity) of this operator instance. */
  reportingInstance: string;
  /** Repeats within this window join a series. Default 6 min (as client-go). */
  windowMs?: number;
  logger?: Logger;
}

interface Series {
  namespace: string;
  name: string;
  count: number;
  firstAt: number;
  /** Writes for one series are serialized so counts never go backwards. */
  pending: Promise<void>;
}

export function refTo(obj: KubeObject): ObjectReference {
  if (!obj.apiVersion || !obj.kind) throw new Error('refTo needs an object with apiVersion and kind');
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
    uid: obj.metadata.uid,
    resourceVersion: obj.metadata.resourceVersion,
  };
}

/** Scrubbed of secrets and cut to the API's 1 KiB limit without splitting a UTF-8 sequence. */
export function eventNote(note: string): string {
  const clean = scrub(note);
  const bytes = Buffer.from(clean, 'utf8');
  if (bytes.length <= NOTE_MAX_BYTES) return clean;
  const suffix = '…';
  const cut = bytes.subarray(0, NOTE_MAX_BYTES - Buffer.byteLength(suffix));
  // Dropping replacement characters removes a partially cut multi-byte character.
  return `${cut.toString('utf8').replace(/\uFFFD+$/, '')}${suffix}`;
}

export class EventRecorder {
  private readonly opts: EventRecorderOptions;
  private readonly windowMs: number;
  private readonly series = new Map<string, Series>();

  constructor(options: EventRecorderOptions) {
    this.opts = options;
    this.windowMs = options.windowMs ?? 6 * 60_000;
  }

  normal(regarding: ObjectReference, reason: string, action: string, note: string): Promise<void> {
    return this.record({ regarding, type: 'Normal', reason, action, note });
  }

  warning(regarding: ObjectReference, reason: string, action: string, note: string): Promise<void> {
    return this.record({ regarding, type: 'Warning', reason, action, note });
  }

  /** Resolves when written (or given up on); never rejects. */
  record(input: EventInput): Promise<void> {
    const note = eventNote(input.note);
    const r = input.regarding;
    // A digest rather than the text itself: one is kept per series, a note is up to 1 KiB.
    const key = createHash('sha256')
      .update(
        [r.uid ?? `${r.kind}/${r.namespace}/${r.name}`, input.type, input.reason, input.action, note].join(
          '\u0000',
        ),
      )
      .digest('base64');
    const now = Date.now();
    const existing = this.series.get(key);
    if (existing && now - existing.firstAt < this.windowMs) {
      existing.count++;
      const count = existing.count;
      existing.pending = existing.pending.then(() => this.bump(existing, count, input, note));
      return existing.pending;
    }
    const namespace = r.namespace || 'default';
    const entry: Series = {
      namespace,
      name: eventName(r.name),
      count: 1,
      firstAt: now,
      pending: Promise.resolve(),
    };
    this.remember(key, entry, now);
    entry.pending = this.create(entry, input, note);
    return entry.pending;
  }

  /** How many series are kept (those whose window is still open, at most 4,096). */
  size(): number {
    return this.series.size;
  }

  private remember(key: string, entry: Series, now: number): void {
    this.series.delete(key);
    this.series.set(key, entry);
    // Oldest first in insertion order: drop those whose window has closed (a repeat starts a new
    // Event anyway), and the oldest when full.
    for (const [k, s] of this.series) {
      if (now - s.firstAt < this.windowMs && this.series.size <= CACHE_MAX) break;
      this.series.delete(k);
    }
  }

  private async create(entry: Series, input: EventInput, note: string): Promise<void> {
    const r = input.regarding;
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: entry.namespace },
      eventTime: microTime(new Date(entry.firstAt)),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.opts.reportingInstance,
      regarding: r,
      type: input.type,
      reason: input.reason,
      action: input.action,
      note,
      ...(entry.count > 1 ? { series: { count: entry.count, lastObservedTime: microTime(new Date()) } } : {}),
    };
    try {
      await this.opts.client.create(resourcePath('events.k8s.io/v1', 'events', entry.namespace), body);
    } catch (err) {
      this.opts.logger?.warn(
        { err, reason: input.reason, object: `${r.namespace}/${r.name}` },
        'could not record event',
      );
    }
  }

  private async bump(entry: Series, count: number, input: EventInput, note: string): Promise<void> {
    if (count < entry.count) return; // a later repeat already wrote a higher count
    const path = resourcePath('events.k8s.io/v1', 'events', entry.namespace, entry.name);
    try {
      await this.opts.client.mergePatch(path, {
        series: { count: entry.count, lastObservedTime: microTime(new Date()) },
      });
    } catch (err) {
      if (isNotFound(err)) {
        // The first Event expired (TTL) or was never written: start over under a new name.
        entry.name = eventName(input.regarding.name);
        await this.create(entry, input, note);
        return;
      }
      this.opts.logger?.warn({ err, reason: input.reason }, 'could not update event series');
    }
  }
}

function eventName(objectName: string): string {
  return `${objectName.slice(0, 200)}.${Date.now().toString(16)}${randomBytes(2).toString('hex')}`;
}
