// The images the three charts run, as tests find them in rendered manifests, and per chart the
// values that between them render every template with every optional extra on.
import { CHART_DIR, type KubeObject, OPERATOR_CHART_DIR, SIMULATOR_CHART_DIR } from './chart.ts';

export const LINK = 'https://bundles.example.com/se_42/bundle.tar.gz?expires=1900000000&sig=c2lnbmF0dXJl';

/** Per chart, values that between them render every template, every optional extra on. */
export const CHART_VALUES: Record<string, { dir: string; values: object[] }> = {
  'static-export-operator': {
    dir: OPERATOR_CHART_DIR,
    values: [
      {
        watchNamespaces: ['docs', 'blog'],
        networkPolicy: { enabled: true, apiServerPeers: [{ ipBlock: { cidr: '10.0.0.1/32' } }] },
        metrics: {
          serviceMonitor: { enabled: true },
          prometheusRule: { enabled: true },
          grafanaDashboard: { enabled: true },
        },
        trigger: { enabled: true },
        tests: { enabled: true },
      },
    ],
  },
  'static-export-site': {
    dir: CHART_DIR,
    values: [
      {
        staticExport: { enabled: true, bundleUrl: LINK },
        deploymentKind: 'airGapped',
        features: { playground: { enabled: true, host: 'https://api.internal.example' } },
        ingress: { enabled: true, className: 'nginx', hosts: [{ host: 'docs.example.com' }] },
        httpRoute: { enabled: true, parentRefs: [{ name: 'gw' }], hostnames: ['docs.example.com'] },
        autoscaling: { enabled: true },
        networkPolicy: { enabled: true, bundleHostPeers: [{ ipBlock: { cidr: '10.20.0.0/16' } }] },
        tests: { enabled: true },
      },
      {
        staticExport: {
          enabled: true,
          existingSecret: 'docs-site-values',
          sync: { enabled: true },
          oci: { credentialsSecret: 'login', publicKeySecret: 'signing', caSecret: 'ca' },
        },
        tests: { enabled: true },
      },
    ],
  },
  'static-export-simulator': {
    dir: SIMULATOR_CHART_DIR,
    values: [{ docs: { configMap: 'pages' }, tests: { enabled: true } }],
  },
};

/** Every image a pod of `objects` pulls: containers of every kind and image volumes. */
export function imagesOf(objects: KubeObject[]): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (['containers', 'initContainers', 'ephemeralContainers'].includes(key) && Array.isArray(value)) {
        for (const c of value as { image: string }[]) found.push(c.image);
      } else if (key === 'volumes' && Array.isArray(value)) {
        for (const v of value as { image?: { reference: string } }[])
          if (v.image) found.push(v.image.reference);
      }
      walk(value);
    }
  };
  walk(objects);
  return found;
}
