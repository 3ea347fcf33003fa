// The publish gate on the real control plane: a bad export (the simulator's site faults) is not
// published, the served version keeps serving, and the user sees why with the numbers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor, eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease, requestExport } from '../../support/cluster/resources.ts';

const h = useOperatorSuite({ namespaces: ['gate'], editableDocs: true, sim: { exportDurationMs: 300 } });

const ready = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');
const stalled = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Stalled');

function until(what: string, test: (r: StaticExportRelease) => boolean) {
  return eventually(`gated: ${what}`, async () => {
    const r = await getRelease(h.ns, 'gated');
    return test(r) ? r : undefined;
  });
}

async function servedValuesVersion(): Promise<string> {
  const s = JSON.parse(await kubectlOk(['get', 'secret', 'gated-values', '-n', h.ns, '-o', 'json'])) as {
    data: Record<string, string>;
  };
  const values = parse(Buffer.from(s.data['values.yaml'] ?? '', 'base64').toString()) as {
    staticExport: { version: string };
  };
  return values.staticExport.version;
}

const trigger = (value: string) => requestExport(h.ns, 'gated', value);

/** Waits until the export asked for by `trigger(value)` was handled, and returns the release. */
const handled = (value: string) =>
  until(
    `export for ${value} handled`,
    (r) => r.status?.lastHandledRequestedAt === value && Boolean(r.status.export?.finishedAt),
  );

describe('publish gate', () => {
  it('refuses bad exports while the served version keeps serving, and publishes good ones again', async () => {
    await applyRelease(h.ns, 'gated');
    const first = await until('Ready', (r) => ready(r)?.status === 'True');
    const v1 = first.status?.current?.version;
    expect(first.status?.current?.pageCount).toBe(8);
    expect(first.status?.history?.[0]?.pageCount).toBe(8);

    // An export that completes with an archive of directories only.
    h.sim.configure({ faults: ['start:empty:1:1'] });
    await trigger('empty');
    const empty = await handled('empty');
    expect(ready(empty)).toMatchObject({ status: 'False', reason: 'PublishGateFailed' });
    expect(ready(empty)?.message).toContain(
      'was not published: it has no index.html at its root; it has 0 pages, fewer than the minimum of 1; its page count dropped from 8 to 0 (100%, more than the allowed 50%)',
    );
    expect(ready(empty)?.message).toContain(`Still serving ${v1}`);
    expect(stalled(empty)).toBeUndefined();
    expect(empty.status?.current).toEqual(first.status?.current);
    expect(await servedValuesVersion()).toBe(v1);
    const warning = (await eventsFor(h.ns, 'gated')).find((e) => e.reason === 'PublishGateFailed');
    expect(warning?.type).toBe('Warning');
    expect(warning?.note).toContain('it has 0 pages, fewer than the minimum of 1');
    // Handled: no new export until the next trigger (no interval here).
    const started = h.sim.exportJobsStarted();
    await new Promise((r) => setTimeout(r, 2_000));
    expect(h.sim.exportJobsStarted()).toBe(started);

    // A good export with new content is published again.
    h.sim.configure({ faults: [] });
    writeFileSync(join(h.docsDir, 'getting-started.md'), '# Getting started\n\nNew content.\n');
    await trigger('good');
    const good = await handled('good');
    expect(ready(good)).toMatchObject({ status: 'True', reason: 'Published' });
    const v2 = good.status?.current?.version;
    expect(v2).not.toBe(v1);
    expect(await servedValuesVersion()).toBe(v2);

    // Too large a drop: 2 pages against the 8 served.
    h.sim.configure({ faults: ['start:pages=2:1'] });
    await trigger('drop');
    const drop = await handled('drop');
    expect(ready(drop)?.reason).toBe('PublishGateFailed');
    expect(ready(drop)?.message).toContain(
      'its page count dropped from 8 to 2 (75%, more than the allowed 50%)',
    );
    expect(await servedValuesVersion()).toBe(v2);

    // Overridden for this release: the spec change re-exports, and the smaller site is published.
    await applyRelease(h.ns, 'gated', { publishGate: { maxPageDrop: '80%' } });
    const overridden = await until(
      'published with the override',
      (r) => ready(r)?.reason === 'Published' && r.status?.current?.pageCount === 2,
    );
    expect(await servedValuesVersion()).toBe(overridden.status?.current?.version);
    h.sim.configure({ faults: [] });
  });
});
