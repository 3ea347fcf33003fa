// Links whose signature sits in the path or in matrix parameters, as some object stores sign them:
// the operator describes them by scheme, host and file name only, in status, events and logs.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';

describe.each(['path', 'matrix'] as const)('a bundle link with its signature in the %s', (linkStyle) => {
  const h = useOperatorSuite({
    namespaces: [`link-${linkStyle}`],
    sim: { exportDurationMs: 200, linkStyle },
  });

  const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

  it('is described without its signature when its download fails, and published once it works', async () => {
    h.sim.configure({ faults: ['download:403:1'] });
    await applyRelease(h.ns, 'site');
    const failing = await eventually('site: the failed download reported', async () => {
      const r = await getRelease(h.ns, 'site');
      return readyOf(r)?.message?.includes('/bundle.tar.gz answered') ? r : undefined;
    });
    expect(readyOf(failing)?.message).toMatch(/http:\/\/127\.0\.0\.1:\d+\/…\/bundle\.tar\.gz answered 403/);
    h.sim.configure({ faults: [] });
    await eventually('site: Ready', async () => {
      const r = await getRelease(h.ns, 'site');
      return readyOf(r)?.status === 'True' ? r : undefined;
    });

    const secret = JSON.parse(
      await kubectlOk(['get', 'secret', 'site-values', '-n', h.ns, '-o', 'json']),
    ) as {
      data: Record<string, string>;
    };
    const link = (
      parse(Buffer.from(secret.data['values.yaml'] ?? '', 'base64').toString()) as {
        staticExport: { bundleUrl: string };
      }
    ).staticExport.bundleUrl;
    expect(link).not.toContain('?');
    const signature = /[0-9a-f]{64}/.exec(link)?.[0];
    expect(signature).toBeDefined();

    const everything = [
      await kubectlOk(['get', 'ser', '-n', h.ns, '-o', 'json']),
      await kubectlOk(['get', 'events.events.k8s.io', '-n', h.ns, '-o', 'json']),
      h.logs.join('\n'),
    ].join('\n');
    expect(everything).toContain('/bundle.tar.gz');
    expect(everything).not.toContain(signature);
    expect(everything).not.toMatch(/;(sig|expires)=/);
    // Nor any other link's: every 64-digit hex string shown is a content digest.
    const hex = [...everything.matchAll(/(.{0,7})\b[0-9a-f]{64}\b/g)].map((m) => m[1] ?? '');
    expect(hex.filter((before) => !/sha256[-:]$/.test(before))).toEqual([]);
  });
});
