// Events written to the real API server: the API accepts our events.k8s.io/v1 bodies (MicroTime,
// note limit, series updates) and repeats become a series on one Event.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventRecorder, REPORTING_CONTROLLER, refTo } from '../../../src/runtime/events.ts';
import type { KubeObject } from '../../../src/runtime/informer.ts';
import { KubeClient, resourcePath } from '../../../src/runtime/kube-client.ts';
import { createNamespace, eventually, kubectlOk } from '../../support/cluster/kube.ts';

interface Event {
  metadata: { name: string };
  regarding: { kind: string; name: string; uid: string };
  reason: string;
  note: string;
  type: string;
  reportingController: string;
  series?: { count: number; lastObservedTime: string };
}

let client: KubeClient;
let ns: string;
let subject: KubeObject;

async function events(): Promise<Event[]> {
  return (await client.list<Event>(resourcePath('events.k8s.io/v1', 'events', ns))).items.filter(
    (e) => e.reportingController === REPORTING_CONTROLLER,
  );
}

beforeAll(async () => {
  client = await KubeClient.create(inject('kubeconfig'));
  ns = await createNamespace('events');
  subject = await client.create<KubeObject>(resourcePath('v1', 'configmaps', ns), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'subject', namespace: ns },
  });
});
afterAll(async () => {
  await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  await client.close();
});

describe('EventRecorder on the real API server', () => {
  it('creates an Event, then counts repeats in its series instead of creating more', async () => {
    const rec = new EventRecorder({ client, reportingInstance: 'test-pod' });
    const ref = refTo(subject);
    const note = 'link https://cdn.example/bundle.tgz?X-Signature=abcdef ready';
    await rec.normal(ref, 'LinkGenerated', 'GenerateLink', note);
    let list = await events();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      regarding: { kind: 'ConfigMap', name: 'subject', uid: subject.metadata.uid },
      reason: 'LinkGenerated',
      type: 'Normal',
    });
    expect(list[0]?.note).not.toContain('abcdef');
    expect(list[0]?.series).toBeUndefined();

    await rec.normal(ref, 'LinkGenerated', 'GenerateLink', note);
    await rec.normal(ref, 'LinkGenerated', 'GenerateLink', note);
    list = await events();
    expect(list).toHaveLength(1);
    expect(list[0]?.series?.count).toBe(3);

    // A different reason is a different Event; an over-long note is accepted once truncated.
    await rec.warning(ref, 'ExportFailed', 'PollExport', 'x'.repeat(5_000));
    list = await events();
    expect(list).toHaveLength(2);
    const failed = list.find((e) => e.reason === 'ExportFailed');
    expect(failed?.type).toBe('Warning');
    expect(Buffer.byteLength(failed?.note ?? '')).toBeLessThanOrEqual(1024);
  });

  it('is what kubectl events shows for the object', async () => {
    const out = await eventually('kubectl sees the events', async () => {
      const text = await kubectlOk(['events', '-n', ns, '--for', 'configmap/subject']);
      return text.includes('LinkGenerated') ? text : undefined;
    });
    expect(out).toMatch(/LinkGenerated/);
  });
});
