import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerSecret } from '../../../src/redact.ts';
import { EventRecorder, eventNote, REPORTING_CONTROLLER, refTo } from '../../../src/runtime/events.ts';
import { KubeApiError } from '../../../src/runtime/kube-client.ts';

class FakeEventsApi {
  created: { path: string; body: Record<string, unknown> }[] = [];
  patched: { path: string; patch: Record<string, unknown> }[] = [];
  fail: unknown;
  patchFail: unknown;
  async create<T>(path: string, body: unknown): Promise<T> {
    if (this.fail) throw this.fail;
    this.created.push({ path, body: body as Record<string, unknown> });
    return body as T;
  }
  async mergePatch<T>(path: string, patch: unknown): Promise<T> {
    if (this.patchFail) {
      const e = this.patchFail;
      this.patchFail = undefined;
      throw e;
    }
    this.patched.push({ path, patch: patch as Record<string, unknown> });
    return patch as T;
  }
}

const release = refTo({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'StaticExportRelease',
  metadata: { name: 'docs', namespace: 'web', uid: 'u-1', resourceVersion: '7' },
});

afterEach(() => {
  vi.useRealTimers();
});

describe('eventNote', () => {
  it('scrubs presigned URLs and registered secrets, and cuts to 1 KiB on a character boundary', () => {
    registerSecret('sk-verysecretkey123');
    const note = eventNote('link https://cdn.example/b.tgz?sig=abc key sk-verysecretkey123');
    expect(note).not.toContain('sig=abc');
    expect(note).not.toContain('sk-verysecretkey123');
    const long = eventNote('é'.repeat(2000));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(1024);
    expect(long).not.toContain('\uFFFD');
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('EventRecorder', () => {
  it('creates an events.k8s.io/v1 Event about the object', async () => {
    const api = new FakeEventsApi();
    const rec = new EventRecorder({ client: api, reportingInstance: 'pod-1' });
    await rec.normal(release, 'ExportStarted', 'StartExport', 'export job j-1 started');
    expect(api.created).toHaveLength(1);
    const { path, body } = api.created[0] ?? { path: '', body: {} };
    expect(path).toBe('/apis/events.k8s.io/v1/namespaces/web/events');
    expect(body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'web' },
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: 'pod-1',
      regarding: { kind: 'StaticExportRelease', name: 'docs', namespace: 'web', uid: 'u-1' },
      type: 'Normal',
      reason: 'ExportStarted',
      action: 'StartExport',
      note: 'export job j-1 started',
    });
    expect(String((body.metadata as { name: string }).name)).toMatch(/^docs\.[0-9a-f]+$/);
    expect(String(body.eventTime)).toMatch(/\.\d{6}Z$/);
    expect(body.series).toBeUndefined();
  });

  it('turns repeats within the window into a series on the first Event', async () => {
    const api = new FakeEventsApi();
    const rec = new EventRecorder({ client: api, reportingInstance: 'pod-1' });
    await rec.warning(release, 'RateLimited', 'StartExport', 'retry in 30s');
    await Promise.all([
      rec.warning(release, 'RateLimited', 'StartExport', 'retry in 30s'),
      rec.warning(release, 'RateLimited', 'StartExport', 'retry in 30s'),
    ]);
    await rec.warning(release, 'RateLimited', 'StartExport', 'other note');
    expect(api.created).toHaveLength(2);
    const name = (api.created[0]?.body.metadata as { name: string } | undefined)?.name;
    expect(name).toBeTruthy();
    expect(api.patched.every((p) => p.path.endsWith(`/events/${name}`))).toBe(true);
    // Concurrent repeats coalesce into one write with the latest count.
    expect(api.patched.map((p) => (p.patch.series as { count: number }).count)).toEqual([3]);
  });

  it('starts a new Event after the window, or when the first one is gone', async () => {
    const api = new FakeEventsApi();
    const rec = new EventRecorder({ client: api, reportingInstance: 'pod-1', windowMs: 30 });
    await rec.normal(release, 'Published', 'WriteTarget', 'v1');
    await new Promise((r) => setTimeout(r, 40));
    await rec.normal(release, 'Published', 'WriteTarget', 'v1');
    expect(api.created).toHaveLength(2);
    api.patchFail = new KubeApiError(404, 'NotFound', 'gone');
    await rec.normal(release, 'Published', 'WriteTarget', 'v1');
    expect(api.created).toHaveLength(3);
    expect(api.created[2]?.body.series).toMatchObject({ count: 2 });
  });

  it('keeps a series only while its window is open', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const api = new FakeEventsApi();
    const rec = new EventRecorder({ client: api, reportingInstance: 'pod-1', windowMs: 60_000 });
    await rec.normal(release, 'Published', 'WriteTarget', 'v1');
    await rec.normal(release, 'Published', 'WriteTarget', 'v2');
    vi.advanceTimersByTime(30_000);
    await rec.normal(release, 'Published', 'WriteTarget', 'v3');
    expect(rec.size()).toBe(3);
    // The first two windows have closed: the next Event drops them, not the third's.
    vi.advanceTimersByTime(40_000);
    await rec.normal(release, 'Published', 'WriteTarget', 'v4');
    expect(rec.size()).toBe(2);
    await rec.normal(release, 'Published', 'WriteTarget', 'v3');
    expect(api.patched).toHaveLength(1);
  });

  it('never throws when the API fails', async () => {
    const api = new FakeEventsApi();
    api.fail = new KubeApiError(403, 'Forbidden', 'no');
    const rec = new EventRecorder({ client: api, reportingInstance: 'pod-1' });
    await expect(rec.normal(release, 'X', 'Y', 'z')).resolves.toBeUndefined();
    api.patchFail = new Error('boom');
    await expect(rec.normal(release, 'X', 'Y', 'z')).resolves.toBeUndefined();
  });
});
