// A KubeClient-shaped fake for list-watch: a store of objects with resourceVersions, and watch
// streams the test drives event by event (or lets hang silently, or fails).

import type { KubeObject, ListWatchClient } from '../../../src/runtime/informer.ts';
import type { ObjectList, WatchEvent } from '../../../src/runtime/kube-client.ts';

type Item = WatchEvent<unknown> | { end: true } | { error: unknown };

export class FakeStream {
  readonly query: Record<string, unknown>;
  readonly path: string;
  aborted = false;
  private readonly buffer: Item[] = [];
  private wake: (() => void) | undefined;

  constructor(path: string, query: Record<string, unknown>) {
    this.path = path;
    this.query = query;
  }

  send(type: WatchEvent<unknown>['type'], object: unknown): void {
    this.push({ type, object });
  }
  end(): void {
    this.push({ end: true });
  }
  fail(error: unknown): void {
    this.push({ error });
  }

  private push(item: Item): void {
    this.buffer.push(item);
    this.wake?.();
  }

  async *iterate(signal: AbortSignal): AsyncGenerator<WatchEvent<unknown>> {
    const onAbort = () => {
      this.aborted = true;
      this.wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    for (;;) {
      if (signal.aborted) throw new DOMException('aborted', 'AbortError');
      const item = this.buffer.shift();
      if (!item) {
        await new Promise<void>((r) => {
          this.wake = r;
        });
        continue;
      }
      if ('end' in item) return;
      if ('error' in item) throw item.error;
      yield item;
    }
  }
}

export const cm = (ns: string, name: string, rv: string | number, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: ns, name, resourceVersion: String(rv), uid: `uid-${ns}-${name}` },
  data,
});

export class FakeKube implements ListWatchClient {
  objects: KubeObject[] = [];
  resourceVersion = '100';
  listCalls: { path: string; query: Record<string, unknown>; pageSize?: number }[] = [];
  listError: unknown;
  /** The next list hangs until its signal aborts. */
  hangList = false;
  readonly streams: FakeStream[] = [];

  async list<T>(
    path: string,
    query: Record<string, unknown> = {},
    pageSize?: number,
    signal?: AbortSignal,
  ): Promise<ObjectList<T>> {
    this.listCalls.push({ path, query, pageSize });
    if (this.hangList) {
      this.hangList = false;
      await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    }
    if (this.listError) {
      const e = this.listError;
      this.listError = undefined;
      throw e;
    }
    const ns = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
    const items = this.objects.filter((o) => ns === undefined || o.metadata.namespace === ns);
    return { metadata: { resourceVersion: this.resourceVersion }, items: structuredClone(items) as T[] };
  }

  watch<T>(path: string, query: Record<string, unknown>, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    const stream = new FakeStream(path, query);
    this.streams.push(stream);
    return stream.iterate(signal) as AsyncIterable<WatchEvent<T>>;
  }

  lastStream(): FakeStream {
    const s = this.streams.at(-1);
    if (!s) throw new Error('no watch yet');
    return s;
  }
}

export async function until(what: string, probe: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
