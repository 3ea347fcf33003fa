// The site chart rendered by the real Helm 4 and Helm 3 binaries over the values users give it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  A_VERSION,
  CHART_DIR,
  findObject,
  HELMS,
  type HelmName,
  helm,
  helmLint,
  helmTemplate,
  inlineValues,
  type KubeObject,
  merge,
  podSpec,
  valuesFile,
} from '../../support/tools/chart.ts';

const LINK = 'https://bundles.example.com/se_42/bundle.tar.gz?expires=1900000000&sig=c2VjcmV0LXNpZw';
const LINK_B64 = Buffer.from(LINK).toString('base64');

const MATRIX: Record<string, object> = {
  'cloud, inline link': inlineValues(LINK, { deploymentKind: 'cloud' }),
  'clientHosted, inline link and pin': inlineValues(LINK, {
    deploymentKind: 'clientHosted',
    staticExport: { version: A_VERSION },
    features: { search: { enabled: true, host: 'https://search.example.com' } },
  }),
  'airGapped, inline link, everything optional on': inlineValues(LINK, {
    deploymentKind: 'airGapped',
    features: { playground: { enabled: true, host: 'https://api.internal.example' } },
    image: { digest: `sha256:${'0'.repeat(64)}` },
    ingress: { enabled: true, className: 'nginx', hosts: [{ host: 'docs.example.com' }] },
    httpRoute: { enabled: true, parentRefs: [{ name: 'gw' }], hostnames: ['docs.example.com'] },
    autoscaling: { enabled: true },
    networkPolicy: { enabled: true, bundleHostPeers: [{ ipBlock: { cidr: '10.20.0.0/16' } }] },
  }),
  'inside the gap: a site image by digest, login and signature check': {
    staticExport: {
      enabled: true,
      oci: {
        reference: `registry.internal:5000/docs/site@sha256:${'c'.repeat(64)}`,
        credentialsSecret: 'login',
        publicKeySecret: 'signing',
      },
    },
  },
  'inside the gap: the image as an image volume': {
    staticExport: {
      enabled: true,
      oci: {
        reference: `registry.internal:5000/docs/site@sha256:${'c'.repeat(64)}`,
        credentialsSecret: 'login',
        imageVolume: true,
      },
    },
  },
  'OpenShift: ids left to the cluster, one replica, own spread only': inlineValues(LINK, {
    openshift: true,
    replicaCount: 1,
    spreadAcrossNodes: false,
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ],
    resources: { limits: { cpu: '1500m', memory: '256Mi' } },
  }),
  'existing Secret (the operator writes it)': {
    staticExport: { enabled: true, existingSecret: 'docs-site-values' },
  },
  'existing Secret, content sync sidecar': {
    staticExport: { enabled: true, existingSecret: 'docs-site-values', sync: { enabled: true } },
  },
  disabled: {},
};

const HELM_NAMES = Object.keys(HELMS) as HelmName[];

async function render(values: object): Promise<KubeObject[]> {
  const result = await helmTemplate('helm4', values);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.objects;
}

describe('helm lint and helm template over the values matrix', () => {
  for (const [name, values] of Object.entries(MATRIX)) {
    it(`${name}: lints and renders the same objects with Helm 4 and Helm 3`, async () => {
      const outputs: KubeObject[][] = [];
      for (const helm of HELM_NAMES) {
        const lint = await helmLint(helm, values);
        expect(lint.code, `${helm} lint: ${lint.stdout}${lint.stderr}`).toBe(0);
        const rendered = await helmTemplate(helm, values);
        expect(rendered.code, `${helm} template: ${rendered.stderr}`).toBe(0);
        outputs.push(rendered.objects);
      }
      expect(outputs[1]).toEqual(outputs[0]);
    });
  }

  it('disabled renders nothing', async () => {
    expect(await render(MATRIX.disabled as object)).toEqual([]);
  });

  it('renders every optional object when asked', async () => {
    const kinds = (await render(MATRIX['airGapped, inline link, everything optional on'] as object)).map(
      (o) => o.kind,
    );
    expect(kinds.sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HTTPRoute',
        'HorizontalPodAutoscaler',
        'Ingress',
        'NetworkPolicy',
        'Pod',
        'PodDisruptionBudget',
        'Secret',
        'Service',
      ].sort(),
    );
  });
});

describe('the bundle link is a credential', () => {
  it('appears only in the chart-rendered Secret, never in another object, annotation or the NOTES', async () => {
    for (const [name, values] of Object.entries(MATRIX)) {
      const objects = await render(values);
      for (const o of objects.filter((x) => x.kind !== 'Secret')) {
        const text = JSON.stringify(o);
        expect(text, `${name}: ${o.kind}`).not.toContain(LINK);
        expect(text, `${name}: ${o.kind}`).not.toContain(LINK_B64);
        expect(text, `${name}: ${o.kind}`).not.toContain('sig=');
      }
    }
    // What an install stores and prints: manifest, hooks and NOTES (Helm 3 needs a cluster for this).
    for (const values of [MATRIX['cloud, inline link'], MATRIX['existing Secret (the operator writes it)']]) {
      const install = await helm('helm4', [
        'install',
        'docs',
        CHART_DIR,
        '--dry-run=client',
        '--namespace',
        'docs',
        '-f',
        await valuesFile(values as object),
      ]);
      expect(install.code, install.stderr).toBe(0);
      expect(install.stdout).toContain('NOTES:');
      expect(install.stdout).not.toContain(LINK);
      expect(install.stdout.split(LINK_B64).length).toBeLessThanOrEqual(2);
    }
  });

  it('reaches the init container only through secretKeyRef', async () => {
    const objects = await render(MATRIX['cloud, inline link'] as object);
    const secret = findObject(objects, 'Secret');
    expect(Buffer.from(secret.data.bundleUrl, 'base64').toString()).toBe(LINK);
    const init = podSpec(objects).initContainers[0];
    expect(init.env).toContainEqual({
      name: 'STATIC_EXPORT_BUNDLE_URL',
      valueFrom: { secretKeyRef: { name: secret.metadata.name, key: 'bundleUrl' } },
    });
  });

  it('an existing Secret is read by name and keys, and no Secret is rendered', async () => {
    const objects = await render({
      staticExport: {
        enabled: true,
        existingSecret: 'docs-site-values',
        existingSecretKeys: { bundleUrl: 'link', version: 'contentVersion' },
      },
    });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const init = podSpec(objects).initContainers[0];
    expect(init.env).toEqual(
      expect.arrayContaining([
        {
          name: 'STATIC_EXPORT_BUNDLE_URL',
          valueFrom: { secretKeyRef: { name: 'docs-site-values', key: 'link' } },
        },
        {
          name: 'STATIC_EXPORT_VERSION',
          valueFrom: { secretKeyRef: { name: 'docs-site-values', key: 'contentVersion' } },
        },
      ]),
    );
    // The version the operator wrote is enforced, whatever it is at the pod's start.
    expect(init.command.join(' ')).toContain('--expect-version $(STATIC_EXPORT_VERSION)');
    const deployment = findObject(objects, 'Deployment');
    expect(deployment.metadata.labels?.['staticexport.dev/values-secret']).toBe('docs-site-values');
    // The operator owns the version annotation in this mode (its own field manager): Helm never sets it.
    expect(deployment.spec.template.metadata.annotations).not.toHaveProperty('staticexport.dev/version');
  });
});

describe('the pod', () => {
  it('runs both containers unprivileged, read-only, with resources, and nginx reads the site read-only', async () => {
    const objects = await render(MATRIX['cloud, inline link'] as object);
    const pod = podSpec(objects);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    const tests = findObject(objects, 'Pod').spec;
    for (const c of [...pod.initContainers, ...pod.containers, ...tests.containers]) {
      expect(c.securityContext, c.name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.resources.requests, c.name).toHaveProperty('memory');
      expect(c.resources.limits, c.name).toHaveProperty('memory');
    }
    const nginx = pod.containers[0];
    expect(nginx.volumeMounts).toContainEqual({ name: 'site', mountPath: '/srv/www', readOnly: true });
    expect(nginx.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(nginx.readinessProbe.httpGet).toEqual({ path: '/', port: 'http' });
    expect(nginx.livenessProbe.httpGet).toEqual({ path: '/_healthz', port: 'http' });
    expect(nginx.lifecycle.preStop.exec.command.join(' ')).toContain('-s quit');
    expect(pod.volumes).toContainEqual({ name: 'site', emptyDir: { sizeLimit: '2Gi' } });
  });

  it('fetches into a subdirectory of the volume, with the pin and the download options', async () => {
    const objects = await render(MATRIX['clientHosted, inline link and pin'] as object);
    const init = podSpec(objects).initContainers[0];
    expect(init.volumeMounts).toContainEqual({ name: 'site', mountPath: '/srv/www' });
    expect(init.command).toEqual([
      'static-export',
      'fetch',
      '--dest',
      '/srv/www/site',
      '--expect-version',
      A_VERSION,
      '--retries',
      '5',
      '--min-pages',
      '1',
      '--timeout',
      '900s',
    ]);
    const timed = await render(
      merge(MATRIX['cloud, inline link'] as object, { staticExport: { fetch: { timeoutSeconds: 120 } } }),
    );
    expect(podSpec(timed).initContainers[0].command.slice(-2)).toEqual(['--timeout', '120s']);
  });

  it('annotates the version and the config checksum; a new version or config changes the template', async () => {
    const pinned = findObject(
      await render(MATRIX['clientHosted, inline link and pin'] as object),
      'Deployment',
    );
    const annotations = pinned.spec.template.metadata.annotations;
    expect(annotations['staticexport.dev/version']).toBe(A_VERSION);
    expect(annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    const unpinned = findObject(await render(MATRIX['cloud, inline link'] as object), 'Deployment');
    expect(unpinned.spec.template.metadata.annotations).not.toHaveProperty('staticexport.dev/version');
    // cloud and clientHosted differ in their CSP, so in their config.
    expect(unpinned.spec.template.metadata.annotations['checksum/config']).not.toBe(
      annotations['checksum/config'],
    );
    expect(unpinned.metadata.labels?.['staticexport.dev/values-secret']).toBe('docs-static-export-site');
  });

  it('sets a CSP per deployment kind', async () => {
    const csp = async (values: object) => {
      const data = findObject(await render(values), 'ConfigMap').data['security-headers.conf'] as string;
      return /Content-Security-Policy "([^"]+)"/.exec(data)?.[1] ?? '';
    };
    expect(await csp(MATRIX['cloud, inline link'] as object)).toContain("connect-src 'self' https:;");
    expect(await csp(MATRIX['clientHosted, inline link and pin'] as object)).toContain(
      "connect-src 'self' https://search.example.com;",
    );
    expect(await csp(MATRIX['airGapped, inline link, everything optional on'] as object)).toContain(
      "connect-src 'self' https://api.internal.example;",
    );
    // A host given for a feature that is off is not allowed.
    expect(
      await csp(
        inlineValues(LINK, { features: { analytics: { enabled: false, host: 'https://a.example.com' } } }),
      ),
    ).toContain("connect-src 'self';");
  });

  it('the air-gapped NetworkPolicy lets the pods reach only the bundle host and DNS', async () => {
    const objects = await render(MATRIX['airGapped, inline link, everything optional on'] as object);
    const policy = findObject(objects, 'NetworkPolicy').spec;
    expect(policy.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.egress[0]).toEqual({
      to: [{ ipBlock: { cidr: '10.20.0.0/16' } }],
      ports: [{ port: 443, protocol: 'TCP' }],
    });
    expect(policy.egress[1].ports).toContainEqual({ port: 53, protocol: 'UDP' });
    expect(policy.egress).toHaveLength(2);
    // With an HPA the Deployment leaves the replica count to it.
    expect(findObject(objects, 'Deployment').spec).not.toHaveProperty('replicas');
    expect(findObject(objects, 'Deployment').spec.template.spec.initContainers[0].image).toBe(
      `ghcr.io/static-export-operator/static-export@sha256:${'0'.repeat(64)}`,
    );
  });
});

describe('inside the gap: a site image', () => {
  const REF = `registry.internal:5000/docs/site@sha256:${'c'.repeat(64)}`;
  const oci = (extra: object = {}) => ({
    staticExport: { enabled: true, oci: { reference: REF, ...extra } },
  });

  it('pulls the image in the init container: the reference as an argument, login, public key and registry CA as mounted files, no link', async () => {
    const objects = await render(
      oci({ credentialsSecret: 'login', publicKeySecret: 'signing', caSecret: 'internal-ca' }),
    );
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const pod = podSpec(objects);
    const init = pod.initContainers[0];
    const args = init.command.join(' ');
    expect(args).toContain(`--oci ${REF}`);
    expect(args).toContain('--authfile /var/run/static-export/registry/config.json');
    expect(args).toContain('--verify-key /var/run/static-export/verify/cosign.pub');
    expect(args).toContain('--ca-file /var/run/static-export/registry-ca/ca.crt');
    expect(JSON.stringify(init.env ?? [])).not.toContain('STATIC_EXPORT_BUNDLE_URL');
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        {
          name: 'registry-login',
          secret: { secretName: 'login', items: [{ key: '.dockerconfigjson', path: 'config.json' }] },
        },
        {
          name: 'verify-key',
          secret: { secretName: 'signing', items: [{ key: 'cosign.pub', path: 'cosign.pub' }] },
        },
        {
          name: 'registry-ca',
          secret: { secretName: 'internal-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
        },
      ]),
    );
    // The digest is in the pod template: a new one rolls the pods.
    const deployment = findObject(objects, 'Deployment');
    expect(deployment.spec.template.metadata.annotations?.['staticexport.dev/oci-reference']).toBe(REF);
  });

  it('with imageVolume mounts the image itself as the site: no init container, the login as an imagePullSecret', async () => {
    const objects = await render(oci({ credentialsSecret: 'login', imageVolume: true }));
    const pod = podSpec(objects);
    expect(pod.initContainers ?? []).toEqual([]);
    expect(pod.volumes).toEqual(
      expect.arrayContaining([{ name: 'site', image: { reference: REF, pullPolicy: 'IfNotPresent' } }]),
    );
    expect(pod.imagePullSecrets).toEqual([{ name: 'login' }]);
    const nginx = pod.containers[0];
    expect(nginx.volumeMounts).toEqual(
      expect.arrayContaining([{ name: 'site', mountPath: '/srv/www/site', readOnly: true }]),
    );
  });

  it("existing-Secret mode reads the operator's ociReference key (optional: platform releases have none)", async () => {
    const objects = await render({ staticExport: { enabled: true, existingSecret: 'docs-values' } });
    expect(podSpec(objects).initContainers[0].env).toEqual(
      expect.arrayContaining([
        {
          name: 'STATIC_EXPORT_OCI_REFERENCE',
          valueFrom: { secretKeyRef: { name: 'docs-values', key: 'ociReference', optional: true } },
        },
      ]),
    );
  });

  it('refuses a reference by tag, and a reference together with a bundle link', async () => {
    for (const values of [
      oci({ reference: 'registry.internal:5000/docs/site:latest' }),
      merge(oci(), { staticExport: { bundleUrl: LINK } }),
    ]) {
      const result = await helmTemplate('helm4', values);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/staticExport/);
    }
  });
});

describe('publish without restarts: the content sync sidecar', () => {
  const SYNC = { staticExport: { enabled: true, existingSecret: 'docs-values', sync: { enabled: true } } };
  const SYNC_ARGS = [
    '--root',
    '/srv/www',
    '--secret',
    'docs-values',
    '--bundle-url-key',
    'bundleUrl',
    '--version-key',
    'version',
    '--oci-reference-key',
    'ociReference',
    '--keep',
    '3',
    '--retries',
    '5',
    '--min-pages',
    '1',
    '--timeout',
    '900s',
  ];

  it('fills the first version in the init container and keeps syncing beside nginx, which serves the symlink', async () => {
    const objects = await render(SYNC);
    const pod = podSpec(objects);
    expect(pod.initContainers[0].command).toEqual(['static-export', 'sync', '--once', ...SYNC_ARGS]);
    const [nginx, sync] = pod.containers;
    expect(nginx.name).toBe('nginx');
    expect(sync.name).toBe('sync');
    expect(sync.command).toEqual(['static-export', 'sync', ...SYNC_ARGS]);
    expect(sync.env.map((e: { name: string }) => e.name)).toEqual([
      'POD_NAME',
      'POD_NAMESPACE',
      'STATIC_EXPORT_LOG_LEVEL',
    ]);
    expect(sync.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(sync.resources.limits).toHaveProperty('memory');
    // The pods swap moments apart: a client's page and its assets come from one pod.
    expect(findObject(objects, 'Service').spec.sessionAffinity).toBe('ClientIP');
    const confs = Object.values(findObject(objects, 'ConfigMap').data as Record<string, string>).join('\n');
    // nginx opens the path per request (no open_file_cache), so a swapped symlink serves at once.
    expect(confs).toContain('root /srv/www/current;');
    expect(confs).not.toContain('open_file_cache');
    // A hashed asset of the page read just before a swap comes from the version served before.
    expect(confs).toContain('try_files $uri @previous;');
    expect(confs).toContain('root /srv/www/previous;');
    const without = await render(MATRIX['existing Secret (the operator writes it)'] as object);
    expect(JSON.stringify(findObject(without, 'ConfigMap').data)).not.toContain('@previous');
  });

  it('gives the API token to the sync containers only, with a Role that reads just the values Secret', async () => {
    const objects = await render(SYNC);
    const pod = podSpec(objects);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe('docs-static-export-site-sync');
    const token = {
      name: 'kube-api-access',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    };
    expect(pod.initContainers[0].volumeMounts).toContainEqual(token);
    expect(pod.containers[1].volumeMounts).toContainEqual(token);
    expect(pod.containers[0].volumeMounts).not.toContainEqual(token);
    expect(findObject(objects, 'ServiceAccount').automountServiceAccountToken).toBe(false);
    expect(findObject(objects, 'Role').rules).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['docs-values'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
    ]);
    expect(findObject(objects, 'RoleBinding').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'docs-static-export-site-sync', namespace: 'docs' },
    ]);
  });

  it('narrows the pods/status grant with an admission policy bound to the sync ServiceAccount, per release', async () => {
    const objects = await render(SYNC);
    const policy = findObject(objects, 'ValidatingAdmissionPolicy');
    // Cluster-scoped: the namespace is in the name, so two releases named alike do not collide.
    expect(policy.metadata.name).toBe('docs-docs-static-export-site-sync');
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods/status'] },
    ]);
    expect(policy.spec.matchConditions).toEqual([
      {
        name: 'sync-service-account',
        expression: 'request.userInfo.username == "system:serviceaccount:docs:docs-static-export-site-sync"',
      },
    ]);
    expect(findObject(objects, 'ValidatingAdmissionPolicyBinding').spec).toEqual({
      policyName: 'docs-docs-static-export-site-sync',
      validationActions: ['Deny'],
    });
    const without = await render(MATRIX['existing Secret (the operator writes it)'] as object);
    expect(without.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
  });

  it('below Kubernetes 1.30 (no admissionregistration.k8s.io/v1 policies) refuses sync rather than grant it unchecked', async () => {
    for (const name of HELM_NAMES) {
      const old = await helmTemplate(name, SYNC, 'docs', { extra: ['--kube-version', '1.29.4'] });
      expect(old.code, name).not.toBe(0);
      expect(old.stderr).toContain(
        'staticExport.sync.enabled needs Kubernetes 1.30 or later (this is v1.29.4)',
      );
      // A cluster (or --api-versions) listing the kind is believed over the version.
      const listed = await helmTemplate(name, SYNC, 'docs', {
        extra: [
          '--kube-version',
          '1.29.4',
          '--api-versions',
          'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
        ],
      });
      expect(listed.code, listed.stderr).toBe(0);
      // Without sync the chart still installs on 1.27 and later.
      const plain = await helmTemplate(
        name,
        MATRIX['existing Secret (the operator writes it)'] as object,
        'docs',
        {
          extra: ['--kube-version', '1.27.0'],
        },
      );
      expect(plain.code, plain.stderr).toBe(0);
    }
  });

  it('follows the chart-rendered Secret of an inline link too (no version key there)', async () => {
    const objects = await render(
      merge(inlineValues(LINK), { staticExport: { sync: { enabled: true, keep: 2 } } }),
    );
    const args = podSpec(objects).containers[1].command;
    expect(args).toEqual(expect.arrayContaining(['--secret', 'docs-static-export-site', '--keep', '2']));
    expect(args).not.toContain('--version-key');
    expect(JSON.stringify(objects.filter((o) => o.kind !== 'Secret'))).not.toContain('sig=');
  });

  it('without it nothing changes: no ServiceAccount, no token, fetch into site/', async () => {
    const objects = await render(MATRIX['existing Secret (the operator writes it)'] as object);
    expect(objects.map((o) => o.kind)).not.toContain('ServiceAccount');
    expect(podSpec(objects).serviceAccountName).toBeUndefined();
    expect(podSpec(objects).containers.map((c: { name: string }) => c.name)).toEqual(['nginx']);
    expect(findObject(objects, 'Service').spec.sessionAffinity).toBeUndefined();
  });

  it('refuses combinations it cannot serve, naming the value to change', async () => {
    const cases: [object, RegExp][] = [
      [merge(SYNC, { staticExport: { version: A_VERSION } }), /unset staticExport.version/],
      [
        {
          staticExport: {
            enabled: true,
            oci: { reference: `r.example/d/s@sha256:${'c'.repeat(64)}` },
            sync: { enabled: true },
          },
        },
        /set staticExport.existingSecret .* instead of staticExport.oci.reference/,
      ],
      [merge(SYNC, { staticExport: { sync: { keep: 0 } } }), /keep/],
    ];
    for (const [values, message] of cases) {
      const result = await helmTemplate('helm4', values);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe('production defaults', () => {
  const conf = (objects: KubeObject[]) =>
    (findObject(objects, 'ConfigMap') as KubeObject & { data: { 'nginx.conf': string } }).data['nginx.conf'];
  const workers = (objects: KubeObject[]) => /^\s*worker_processes (\S+);$/m.exec(conf(objects))?.[1];

  it('spreads the replicas across nodes softly, with the user’s constraints after it or alone', async () => {
    const objects = await render(MATRIX['cloud, inline link'] as object);
    const selector = findObject(objects, 'Deployment').spec.selector.matchLabels;
    const spread = {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: selector },
    };
    expect(podSpec(objects).topologySpreadConstraints).toEqual([spread]);
    const zone = {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
    };
    const both = await render(inlineValues(LINK, { topologySpreadConstraints: [zone] }));
    expect(podSpec(both).topologySpreadConstraints).toEqual([spread, zone]);
    const own = await render(
      inlineValues(LINK, { spreadAcrossNodes: false, topologySpreadConstraints: [zone] }),
    );
    expect(podSpec(own).topologySpreadConstraints).toEqual([zone]);
    const none = await render(inlineValues(LINK, { spreadAcrossNodes: false }));
    expect(podSpec(none)).not.toHaveProperty('topologySpreadConstraints');
  });

  it('renders a PodDisruptionBudget whenever more than one replica runs, none for one', async () => {
    const objects = await render(MATRIX['cloud, inline link'] as object);
    const selector = findObject(objects, 'Deployment').spec.selector.matchLabels;
    expect(findObject(objects, 'PodDisruptionBudget').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: selector },
    });
    const kinds = async (values: object) => (await render(inlineValues(LINK, values))).map((o) => o.kind);
    expect(await kinds({ replicaCount: 1 })).not.toContain('PodDisruptionBudget');
    expect(await kinds({ podDisruptionBudget: { enabled: false } })).not.toContain('PodDisruptionBudget');
    // With autoscaling the floor decides, not replicaCount.
    expect(await kinds({ replicaCount: 1, autoscaling: { enabled: true } })).toContain('PodDisruptionBudget');
    expect(await kinds({ autoscaling: { enabled: true, minReplicas: 1 } })).not.toContain(
      'PodDisruptionBudget',
    );
  });

  it('keeps the helm test pod out of the Service, the budget and the spread (an unowned pod blocks evictions)', async () => {
    const objects = await render(MATRIX['cloud, inline link'] as object);
    const selector = findObject(objects, 'Deployment').spec.selector.matchLabels as Record<string, string>;
    const labels = findObject(objects, 'Pod').metadata.labels ?? {};
    expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(false);
  });

  it('starts one nginx worker per core of the CPU limit, else of the request, `auto` only without either', async () => {
    // The defaults set no CPU limit and request 50m: one worker, not one per core of the node.
    expect(workers(await render(MATRIX['cloud, inline link'] as object))).toBe('1');
    const cases: [object, string][] = [
      [{ limits: { cpu: '500m' } }, '1'],
      [{ limits: { cpu: '1500m' } }, '2'],
      [{ limits: { cpu: 2 } }, '2'],
      [{ limits: { cpu: '2.5' } }, '3'],
      [{ limits: { cpu: '1m' } }, '1'],
      [{ requests: { cpu: '3' }, limits: { cpu: '4' } }, '4'],
      [{ requests: { cpu: '2' }, limits: { memory: '128Mi' } }, '2'],
      [{ requests: { cpu: null }, limits: { memory: '128Mi' } }, 'auto'],
    ];
    for (const [resources, expected] of cases) {
      expect(workers(await render(inlineValues(LINK, { resources }))), JSON.stringify(resources)).toBe(
        expected,
      );
    }
  });

  it('pins nginx to an exact version, the one the chart lists as its image', async () => {
    const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8'));
    expect(values.nginx.image.tag).toMatch(/^\d+\.\d+\.\d+(-[a-z]+)?$/);
    const image = `${values.nginx.image.repository}:${values.nginx.image.tag}`;
    const chart = parse(await readFile(join(CHART_DIR, 'Chart.yaml'), 'utf8'));
    expect(parse(chart.annotations['artifacthub.io/images'])).toContainEqual({ name: 'nginx', image });
    const nginx = (objects: KubeObject[]) => podSpec(objects).containers[0].image;
    expect(nginx(await render(MATRIX['cloud, inline link'] as object))).toBe(image);
    const digest = `sha256:${'d'.repeat(64)}`;
    expect(nginx(await render(inlineValues(LINK, { nginx: { image: { digest } } })))).toBe(
      `${values.nginx.image.repository}@${digest}`,
    );
  });

  it('requests the site volume’s size of ephemeral storage for nginx, unless set or there is no emptyDir', async () => {
    const requests = (objects: KubeObject[]) => podSpec(objects).containers[0].resources.requests;
    expect(requests(await render(MATRIX['cloud, inline link'] as object))).toEqual({
      cpu: '50m',
      memory: '32Mi',
      'ephemeral-storage': '2Gi',
    });
    expect(requests(await render(inlineValues(LINK, { siteVolumeSizeLimit: '5Gi' })))).toMatchObject({
      'ephemeral-storage': '5Gi',
    });
    const own = await render(
      inlineValues(LINK, { resources: { requests: { 'ephemeral-storage': '300Mi' } } }),
    );
    expect(requests(own)).toMatchObject({ 'ephemeral-storage': '300Mi' });
    const imageVolume = await render(MATRIX['inside the gap: the image as an image volume'] as object);
    expect(requests(imageVolume)).not.toHaveProperty('ephemeral-storage');
  });
});

describe('OpenShift: the cluster assigns the ids', () => {
  const ids = ['runAsUser', 'runAsGroup', 'fsGroup'];
  const SYNC = {
    staticExport: { enabled: true, existingSecret: 'docs-site-values', sync: { enabled: true } },
  };

  it('by default every container runs with fixed ids and the pod shares the volume through group 101', async () => {
    const pod = podSpec(await render(SYNC));
    expect(pod.securityContext.fsGroup).toBe(101);
    const uids = [...pod.initContainers, ...pod.containers].map((c) => c.securityContext.runAsUser);
    expect(uids).toEqual([65532, 101, 65532]);
  });

  it('with openshift no pod or container, the test pod included, sets a user, group or fsGroup id', async () => {
    const objects = await render(merge(SYNC, { openshift: true }));
    const pods = [podSpec(objects), findObject(objects, 'Pod').spec];
    for (const pod of pods) {
      for (const id of ids) expect(pod.securityContext).not.toHaveProperty(id);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        for (const id of ids) expect(c.securityContext, c.name).not.toHaveProperty(id);
        expect(c.securityContext, c.name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
      }
    }
    expect(podSpec(objects).initContainers).toHaveLength(1);
    expect(podSpec(objects).containers).toHaveLength(2);
  });
});
