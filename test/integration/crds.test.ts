// The CRDs on a real API server: what `kubectl apply` accepts, what it refuses and how it says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { crdObjects } from '../../src/crd/manifests.ts';
import { createNamespace, installCrds, kubectl, kubectlOk } from '../support/cluster/kube.ts';

let ns: string;
beforeAll(async () => {
  await installCrds();
  ns = await createNamespace('crds');
});
afterAll(async () => {
  await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

type Obj = Record<string, unknown>;

const validRelease = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'StaticExportRelease',
  metadata: { name, namespace: ns },
  spec: {
    domain: 'docs.example.com',
    credentialsSecretRef: { name: 'admin-key' },
    target: { valuesSecret: { name: 'site-values' } },
    ...spec,
  },
});

const validAgentJob = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'AgentJob',
  metadata: { name, namespace: ns },
  spec: {
    projectId: 'proj-1',
    prompt: 'Fix the typo on the quickstart page',
    credentialsSecretRef: { name: 'k' },
    ...spec,
  },
});

const apply = (obj: Obj) => kubectl(['apply', '-f', '-'], stringify(obj));
const getJson = async (kind: string, name: string) =>
  JSON.parse(await kubectlOk(['get', kind, name, '-n', ns, '-o', 'json'])) as { spec: Obj; status?: Obj };

describe('StaticExportRelease CRD', () => {
  it('accepts a minimal release and fills in the defaults', async () => {
    const r = await apply(validRelease('minimal'));
    expect(r.stderr).toBe('');
    const { spec } = await getJson('ser', 'minimal');
    expect(spec.credentialsSecretRef).toEqual({ name: 'admin-key', key: 'apiKey' });
    expect(spec.rollout).toEqual({ onNewContent: 'Rollout', onLinkRenewal: 'None', timeout: '10m' });
    expect(spec.suspend).toBe(false);
    expect(spec.target).toEqual({ valuesSecret: { name: 'site-values', key: 'values.yaml' } });
    expect(spec.publishGate).toEqual({ minPages: 1, maxPageDrop: '50%', disabled: false });
  });

  it('accepts every optional field', async () => {
    const r = await apply(
      validRelease('full', {
        apiBaseUrl: 'https://api.example.com',
        export: { versionLabel: '2024-06-01', paths: ['/', '/guides/start'] },
        interval: '1h30m',
        renewBefore: '10m',
        pinnedVersion: `sha256-${'a'.repeat(64)}`,
        suspend: true,
        rollout: {
          onLinkRenewal: 'None',
          workloadRefs: [
            { kind: 'Deployment', name: 'docs-site' },
            { kind: 'StatefulSet', name: 'docs-cache' },
          ],
          timeout: '15m',
        },
        publishGate: { minPages: 20, maxPageDrop: 30, disabled: true },
        target: { argoApplication: { name: 'docs', namespace: 'argocd', secretName: 'docs-values' } },
      }),
    );
    expect(r.stderr).toBe('');
    const { spec } = await getJson('ser', 'full');
    expect(spec.target).toEqual({
      argoApplication: { name: 'docs', namespace: 'argocd', secretName: 'docs-values' },
    });
  });

  const invalid: [string, Obj, RegExp][] = [
    [
      'a domain with a scheme',
      { domain: 'https://docs.example.com' },
      /spec\.domain must be a bare lowercase host name/,
    ],
    [
      'a domain with a path',
      { domain: 'docs.example.com/docs' },
      /spec\.domain must be a bare lowercase host name/,
    ],
    ['a domain with a trailing slash', { domain: 'docs.example.com/' }, /spec\.domain must be a bare/],
    ['an upper-case domain', { domain: 'Docs.Example.com' }, /spec\.domain must be a bare lowercase/],
    ['localhost as domain', { domain: 'localhost' }, /spec\.domain must be .*not localhost or an IP/],
    ['an IP address as domain', { domain: '10.0.0.1' }, /spec\.domain must be .*not localhost or an IP/],
    [
      'a domain label over 63 characters',
      { domain: `${'a'.repeat(64)}.example.com` },
      /spec\.domain must be .*labels of at most 63 characters/,
    ],
    // A platform release names its site once: by domain (the contract's API) or by project.
    [
      'a projectId beside the domain',
      { projectId: 'proj-1' },
      /names exactly one of spec\.projectId .* or spec\.domain .*: remove the other/,
    ],
    [
      'a base path with a domain',
      { basePath: '/docs' },
      /spec\.basePath and spec\.startBudget belong to the current export API: set them only with spec\.projectId/,
    ],
    [
      'no target',
      { target: {} },
      /spec\.target must set exactly one of valuesSecret, fluxHelmRelease or argoApplication/,
    ],
    [
      'two targets',
      { target: { valuesSecret: { name: 'a' }, fluxHelmRelease: { name: 'b' } } },
      /spec\.target must set exactly one of/,
    ],
    [
      'an interval that is not a duration',
      { interval: 'daily' },
      /spec\.interval must be a duration such as 30s, 15m, 1h/,
    ],
    [
      'an interval below a minute',
      { interval: '10s' },
      /spec\.interval must be from 1m to 8760h \(365 days\)/,
    ],
    // Past int64 nanoseconds CEL's duration() fails with a type conversion error; the range rule never calls it there.
    [
      'an interval of a million years',
      { interval: '9999999999999999h' },
      /spec\.interval must be from 1m to 8760h \(365 days\)/,
    ],
    ['a renewBefore over a year', { renewBefore: '8761h' }, /spec\.renewBefore must be from 1s to 8760h/],
    ['a renewBefore that is not a duration', { renewBefore: '5' }, /spec\.renewBefore must be a duration/],
    [
      'a malformed pinned version',
      { pinnedVersion: 'v1.2.3' },
      /spec\.pinnedVersion must be a content version/,
    ],
    [
      'an apiBaseUrl without http(s)',
      { apiBaseUrl: 'ftp://api.example.com' },
      /spec\.apiBaseUrl must be an absolute http\(s\) URL/,
    ],
    [
      'the base URL the platform publishes, ending in /v1',
      { apiBaseUrl: 'https://api.mintlify.com/v1' },
      /spec\.apiBaseUrl must not end in \/v1: the client adds \/v1\/\.\.\. .*https:\/\/api\.mintlify\.com/,
    ],
    [
      'an unknown rollout mode',
      { rollout: { onLinkRenewal: 'Sometimes' } },
      /spec\.rollout\.onLinkRenewal: Unsupported value: "Sometimes"/,
    ],
    [
      'a bad HelmRelease name',
      { target: { fluxHelmRelease: { name: 'Docs_Site' } } },
      /spec\.target\.fluxHelmRelease\.name must be a Kubernetes object name/,
    ],
    // Removed in favour of the site chart's existing-Secret mode (docs/install.md#serve-a-site).
    ['the helm target', { target: { helm: { releaseName: 'docs' } } }, /unknown field "spec\.target\.helm"/],
    [
      'an export path without a leading slash',
      { export: { paths: ['guides'] } },
      /spec\.export\.paths entries must be site paths starting with \//,
    ],
    [
      'a page drop over 100%',
      { publishGate: { maxPageDrop: '150%' } },
      /spec\.publishGate\.maxPageDrop must be a percentage such as "50%" or a whole number from 0 to 100/,
    ],
    [
      'a page drop over 100 as a number',
      { publishGate: { maxPageDrop: 101 } },
      /spec\.publishGate\.maxPageDrop must be a percentage/,
    ],
    [
      'a values key the chart reads itself',
      { target: { valuesSecret: { name: 'v', key: 'version' } } },
      /spec\.target\.valuesSecret\.key must not be bundleUrl or version/,
    ],
    [
      'a workloadRef of another kind',
      { rollout: { workloadRefs: [{ kind: 'DaemonSet', name: 'x' }] } },
      /spec\.rollout\.workloadRefs\[0\]\.kind: Unsupported value: "DaemonSet"/,
    ],
    [
      'a rollout timeout that is not a duration',
      { rollout: { timeout: 'soon' } },
      /spec\.rollout\.timeout must be a duration/,
    ],
    [
      'a secret key with a slash',
      { credentialsSecretRef: { name: 'k', key: 'a/b' } },
      /spec\.credentialsSecretRef\.key must be a Secret data key/,
    ],
  ];
  it.each(invalid)('refuses %s with a message naming the field', async (_what, spec, message) => {
    const r = await apply(validRelease('bad', spec));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('refuses a release without a source: neither domain with credentials nor spec.source.oci', async () => {
    for (const drop of [['domain', 'credentialsSecretRef'], ['credentialsSecretRef']]) {
      const obj = validRelease('missing');
      for (const field of drop) delete (obj.spec as Obj)[field];
      const r = await apply(obj);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(
        /a StaticExportRelease has exactly one source: either spec\.projectId or spec\.domain, with spec\.credentialsSecretRef \(the platform export\), or spec\.source\.oci/,
      );
    }
  });

  const ociSpec = (oci: Obj = {}): Obj => ({
    target: { valuesSecret: { name: 'site-values' } },
    source: { oci: { repository: 'registry.internal:5000/docs/docs.example.com', ...oci } },
  });
  const ociRelease = (name: string, spec: Obj) => {
    const obj = validRelease(name);
    obj.spec = spec;
    return obj;
  };

  it('accepts a registry source and fills in its defaults', async () => {
    const r = await apply(
      ociRelease(
        'oci-minimal',
        ociSpec({
          credentialsSecretRef: { name: 'registry-login' },
          verify: { publicKeySecretRef: { name: 'site-signing' } },
        }),
      ),
    );
    expect(r.stderr).toBe('');
    const { spec } = await getJson('ser', 'oci-minimal');
    expect(spec.source).toEqual({
      oci: {
        repository: 'registry.internal:5000/docs/docs.example.com',
        tag: 'latest',
        interval: '5m',
        credentialsSecretRef: { name: 'registry-login', key: '.dockerconfigjson' },
        verify: { publicKeySecretRef: { name: 'site-signing', key: 'cosign.pub' } },
      },
    });
    expect(spec.domain).toBeUndefined();
  });

  it.each([
    [
      'both sources',
      { ...ociSpec(), domain: 'docs.example.com', credentialsSecretRef: { name: 'k' } },
      /spec\.source\.oci cannot be combined with spec\.domain, spec\.projectId, .*spec\.credentialsSecretRef, .*spec\.pinnedVersion/,
    ],
    [
      'a platform interval',
      { ...ociSpec(), interval: '5m' },
      /the follow interval is spec\.source\.oci\.interval/,
    ],
    [
      'a repository with a tag',
      ociSpec({ repository: 'registry.internal:5000/docs:latest' }),
      /spec\.source\.oci\.repository must be REGISTRY\/REPOSITORY without tag or digest/,
    ],
    ['a bad tag', ociSpec({ tag: '-latest' }), /spec\.source\.oci\.tag must be an OCI tag/],
    [
      'a too short interval',
      ociSpec({ interval: '1s' }),
      /spec\.source\.oci\.interval must be from 10s to 8760h/,
    ],
  ])('refuses a registry source with %s', async (_what, spec, message) => {
    const r = await apply(ociRelease('oci-bad', spec as Obj));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('shows Ready, Status (the Ready message) and Age in kubectl get; Version, Renewal, Domain, Project and Repository with -o wide', async () => {
    await apply(validRelease('columns'));
    const version = `sha256-${'b'.repeat(64)}`;
    const renewal = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const status = {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Applied',
            message: 'serving',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
        current: { version, renewalTime: renewal },
      },
    };
    await kubectlOk([
      'patch',
      'ser',
      'columns',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
    const table = await kubectlOk(['get', 'ser', 'columns', '-n', ns]);
    const [header, row] = table.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'AGE']);
    expect(row?.split(/\s+/)).toEqual(['columns', 'True', 'serving', expect.stringMatching(/^\d+s$/)]);
    const wide = await kubectlOk(['get', 'ser', 'columns', '-n', ns, '-o', 'wide']);
    const [wideHeader, wideRow] = wide.trim().split('\n');
    expect(wideHeader?.split(/\s+/)).toEqual([
      'NAME',
      'READY',
      'STATUS',
      'AGE',
      'VERSION',
      'RENEWAL',
      'DOMAIN',
      'PROJECT',
      'REPOSITORY',
    ]);
    expect(wideRow?.split(/\s+/).slice(4)).toEqual([version, renewal, 'docs.example.com']);
  });

  it('only writes status through the /status subresource', async () => {
    await apply(validRelease('statusonly'));
    const withStatus = { ...validRelease('statusonly'), status: { current: { version: 'forged' } } };
    await kubectlOk(
      ['replace', '-f', '-'],
      stringify({ ...withStatus, metadata: { name: 'statusonly', namespace: ns } }),
    );
    // Only the defaulted observedGeneration (-1: not yet acted on) is there.
    expect((await getJson('ser', 'statusonly')).status).toEqual({ observedGeneration: -1 });

    await kubectlOk([
      'patch',
      'ser',
      'statusonly',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"current":{"version":"real"}}}',
    ]);
    expect((await getJson('ser', 'statusonly')).status).toEqual({
      observedGeneration: -1,
      current: { version: 'real' },
    });
  });

  it('lists both kinds under the static-export category and the short names', async () => {
    await apply(validAgentJob('listed'));
    const all = await kubectlOk(['get', 'static-export', '-n', ns, '-o', 'name']);
    expect(all).toMatch(/staticexportrelease\.staticexport\.dev\/minimal/);
    expect(all).toMatch(/agentjob\.staticexport\.dev\/listed/);
    expect(await kubectlOk(['get', 'aj', '-n', ns, '-o', 'name'])).toMatch(/listed/);
  });
});

describe('AgentJob CRD', () => {
  it('accepts a job and shows Ready, Status and Age columns (State and PR with -o wide)', async () => {
    expect((await apply(validAgentJob('ok'))).code).toBe(0);
    const header = (await kubectlOk(['get', 'aj', 'ok', '-n', ns])).split('\n')[0];
    expect(header?.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'AGE']);
    const wide = (await kubectlOk(['get', 'aj', 'ok', '-n', ns, '-o', 'wide'])).split('\n')[0];
    expect(wide?.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'AGE', 'STATE', 'PR']);
  });

  it('refuses an empty prompt', async () => {
    const r = await apply(validAgentJob('empty', { prompt: '' }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /spec\.prompt: Invalid value: "": spec\.prompt in body should be at least 1 chars long/,
    );
  });

  it('refuses to change the prompt or project of an existing job', async () => {
    await apply(validAgentJob('fixed'));
    const r = await apply(validAgentJob('fixed', { prompt: 'Something else entirely' }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.prompt is immutable: create a new AgentJob for a new instruction/);
    const p = await apply(validAgentJob('fixed', { projectId: 'proj-2' }));
    expect(p.stderr).toMatch(/spec\.projectId is immutable/);
    expect((await getJson('aj', 'fixed')).spec.prompt).toBe('Fix the typo on the quickstart page');
  });
});

describe('kubectl explain', () => {
  type Node = { type?: string; properties?: Record<string, Node>; items?: Node };
  /** Every path kubectl explain lists fields for: the root and each object (or list of objects). */
  const objectPaths = (node: Node, path: string): string[] => {
    const target = node.items ?? node;
    if (!target.properties) return [];
    return [
      path,
      ...Object.entries(target.properties)
        .filter(([name]) => path.includes('.') || name !== 'metadata')
        .flatMap(([name, child]) => objectPaths(child, `${path}.${name}`)),
    ];
  };
  /** The fields kubectl explain lists, each with its description (empty when it has none). */
  const fieldsOf = (out: string) => {
    const listed = out.slice(out.indexOf('\nFIELDS:\n') + 9);
    // `  name<TAB><type>`, for enums `  enum: a, b`, then the description indented by four.
    return [...listed.matchAll(/^ {2}(\S+)\t<[^>]+>.*\n(?: {2}enum: .*\n)?((?: {4}.*\n| *\n)*)/gm)].map(
      (m) => ({
        name: m[1],
        description: (m[2] ?? '').trim(),
      }),
    );
  };

  it.each(
    crdObjects().map(
      (crd) =>
        [
          crd.spec.names.kind,
          crd.spec.names.plural,
          crd.spec.versions[0]?.schema.openAPIV3Schema as Node,
        ] as const,
    ),
  )('prints a description for every field of %s', async (_kind, plural, schema) => {
    const paths = objectPaths(schema, plural);
    expect(paths.length).toBeGreaterThan(5);
    const undescribed: string[] = [];
    // A few at a time: each call reads the API server's OpenAPI document.
    for (let i = 0; i < paths.length; i += 4) {
      await Promise.all(
        paths.slice(i, i + 4).map(async (path) => {
          const out = await kubectlOk(['explain', path]);
          if (/^DESCRIPTION:\n {4}<empty>$/m.test(out)) undescribed.push(path);
          const fields = fieldsOf(out);
          expect(fields.length, path).toBeGreaterThan(0);
          for (const f of fields) if (!f.description) undescribed.push(`${path}.${f.name}`);
        }),
      );
    }
    expect(undescribed).toEqual([]);
    // The parser itself: a field without a description is seen as such.
    const sample =
      '\nFIELDS:\n  a\t<string>\n\n  b\t<string>\n  enum: x, y\n    Says b.\n\n  c\t<string>\n  enum: z\n\n';
    expect(fieldsOf(sample)).toEqual([
      { name: 'a', description: '' },
      { name: 'b', description: 'Says b.' },
      { name: 'c', description: '' },
    ]);
  });
});
