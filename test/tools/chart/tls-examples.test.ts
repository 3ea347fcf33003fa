// examples/tls/ as a user applies it: the site chart rendered by the real Helm with each values
// file, and the objects beside it agreeing with what the chart renders (the certificate covers the
// routed host, the route attaches to the listener that serves it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR, findObject, helm, helmTemplate, ROOT } from '../../support/tools/chart.ts';

const DIR = join(ROOT, 'examples', 'tls');
const values = (file: string) => parse(readFileSync(join(DIR, file), 'utf8')) as object;
const SERVICE = 'docs-static-export-site';

interface Ingress {
  metadata: { annotations?: Record<string, string> };
  spec: {
    ingressClassName?: string;
    tls?: { secretName: string; hosts: string[] }[];
    rules: { host: string; http: { paths: { backend: { service: { name: string } } }[] } }[];
  };
}
interface Certificate {
  kind: 'Certificate';
  spec: { secretName: string; dnsNames: string[]; issuerRef: { kind: string; name: string } };
}
interface Gateway {
  kind: 'Gateway';
  metadata: { name: string };
  spec: {
    listeners: {
      name: string;
      protocol: string;
      hostname: string;
      tls: { certificateRefs: { kind: string; name: string }[] };
    }[];
  };
}
interface HttpRoute {
  spec: {
    parentRefs: { name: string; sectionName?: string }[];
    hostnames: string[];
    rules: { backendRefs: { name: string }[] }[];
  };
}

describe('examples/tls', () => {
  it('ingress-values.yaml: cert-manager is asked for a certificate covering every host the Ingress routes to the site', async () => {
    const r = await helmTemplate('helm4', values('ingress-values.yaml'), 'docs');
    expect(r.code, r.stderr).toBe(0);
    const ingress = findObject(r.objects, 'Ingress') as unknown as Ingress;
    expect(ingress.metadata.annotations?.['cert-manager.io/cluster-issuer']).toBe('letsencrypt');
    const hosts = ingress.spec.rules.map((rule) => rule.host);
    expect(hosts).toEqual(['docs.example.com']);
    expect(ingress.spec.tls?.flatMap((t) => t.hosts).sort()).toEqual(hosts);
    expect(ingress.spec.tls?.[0]?.secretName).toBe('docs-example-com-tls');
    for (const rule of ingress.spec.rules)
      expect(rule.http.paths.map((p) => p.backend.service.name)).toEqual([SERVICE]);
    const lint = await helm('helm4', ['lint', '--strict', CHART_DIR, '-f', join(DIR, 'ingress-values.yaml')]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
  });

  it("gateway.yaml and gateway-values.yaml: the route attaches to the HTTPS listener whose Secret the Certificate fills, for the certificate's host", async () => {
    const objects = parseAllDocuments(readFileSync(join(DIR, 'gateway.yaml'), 'utf8')).map(
      (d) => d.toJS() as Certificate | Gateway,
    );
    const certificate = objects.find((o): o is Certificate => o.kind === 'Certificate');
    const gateway = objects.find((o): o is Gateway => o.kind === 'Gateway');
    if (!certificate || !gateway) throw new Error('gateway.yaml lacks the Certificate or the Gateway');

    const r = await helmTemplate('helm4', values('gateway-values.yaml'), 'docs');
    expect(r.code, r.stderr).toBe(0);
    const route = findObject(r.objects, 'HTTPRoute') as unknown as HttpRoute;
    expect(route.spec.rules.flatMap((rule) => rule.backendRefs.map((b) => b.name))).toEqual([SERVICE]);

    const [parent] = route.spec.parentRefs;
    expect(parent?.name).toBe(gateway.metadata.name);
    const listener = gateway.spec.listeners.find((l) => l.name === parent?.sectionName);
    expect(listener?.protocol).toBe('HTTPS');
    expect(route.spec.hostnames).toEqual([listener?.hostname]);
    expect(listener?.tls.certificateRefs).toEqual([{ kind: 'Secret', name: certificate.spec.secretName }]);
    expect(certificate.spec.dnsNames).toEqual(route.spec.hostnames);
    // The same issuer as the Ingress example's annotation.
    expect(certificate.spec.issuerRef).toEqual({ kind: 'ClusterIssuer', name: 'letsencrypt' });
  });
});
