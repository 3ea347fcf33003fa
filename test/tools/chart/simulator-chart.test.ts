// The simulator chart (for trying only) rendered by the real Helm 4 and Helm 3 binaries: the
// objects the quickstart names, its pod's flags understood by `static-export simulate`, and the
// rendered commands run as local processes: the simulator serves with the Secret's key and signs
// links for its public URL, and the `helm test` pod's export succeeds against it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSecretVolume } from '../../support/fixtures/secret-volume.ts';
import {
  findObject,
  freePort,
  HELMS,
  type HelmName,
  helmLint,
  helmTemplate,
  type KubeObject,
  podSpec,
  SIMULATOR_CHART_DIR,
  scratchDir,
} from '../../support/tools/chart.ts';
import { MAIN, NODE, runCli } from '../../support/tools/run-cli.ts';

const NS = 'docs';
const NAME = 'static-export-simulator';
const KEY = 'mint_quickstart0123456789';
const isTest = (o: KubeObject) => o.metadata.annotations?.['helm.sh/hook'] === 'test';

async function render(helm: HelmName, values: object = {}, release = NAME) {
  const rendered = await helmTemplate(helm, values, release, { chart: SIMULATOR_CHART_DIR, namespace: NS });
  return {
    ...rendered,
    objects: rendered.objects.filter((o) => !isTest(o)),
    tests: rendered.objects.filter(isTest),
  };
}
const container = (objects: KubeObject[]) => podSpec(objects).containers[0];
const secretKey = (objects: KubeObject[]) =>
  Buffer.from(findObject(objects, 'Secret').data.adminKey, 'base64').toString();

const children = new Set<ReturnType<typeof spawn>>();
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
});

describe.each(Object.keys(HELMS) as HelmName[])('%s', (helm) => {
  it('passes helm lint --strict with the defaults and with everything optional set', async () => {
    for (const values of [
      {},
      {
        adminKey: KEY,
        publicUrl: 'https://sim.example.com',
        docs: { configMap: 'my-docs' },
        service: { type: 'NodePort', port: 8080 },
        image: { digest: `sha256:${'0'.repeat(64)}` },
        tolerations: [{ key: 'k', operator: 'Exists' }],
      },
    ]) {
      const linted = await helmLint(helm, values, SIMULATOR_CHART_DIR);
      expect(linted.code, linted.stdout + linted.stderr).toBe(0);
    }
  });

  it('says it is for trying only, in the chart description, the install notes and its README', async () => {
    for (const file of ['Chart.yaml', 'templates/NOTES.txt', 'README.md']) {
      expect(await readFile(join(SIMULATOR_CHART_DIR, file), 'utf8'), file).toMatch(/for trying only/i);
    }
  });

  it('names the Deployment, Service and Secret as the quickstart does, the Service on port 80', async () => {
    const { objects, stderr } = await render(helm);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(), stderr).toEqual([
      `Deployment/${NAME}`,
      `Secret/${NAME}`,
      `Service/${NAME}`,
    ]);
    const service = findObject(objects, 'Service');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    expect(service.spec.selector).toEqual(findObject(objects, 'Deployment').spec.selector.matchLabels);
    expect(findObject(objects, 'Deployment').spec).toMatchObject({
      replicas: 1,
      strategy: { type: 'Recreate' },
    });
    for (const o of objects)
      expect(o.metadata.labels?.['app.kubernetes.io/part-of']).toBe('static-export-operator');
  });

  it('generates an admin key when none is given, uses the one given, and refuses a bad one without showing it', async () => {
    expect(secretKey((await render(helm)).objects)).toMatch(/^mint_[A-Za-z0-9]{40}$/);
    expect(secretKey((await render(helm, { adminKey: KEY })).objects)).toBe(KEY);
    const bad = await render(helm, { adminKey: 'mint_with a space' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('adminKey must look like an admin key');
    expect(bad.stderr).not.toContain('with a space');
  });

  it('puts nothing derived from the admin key on the pod: Deployments rendered for two keys are the same', async () => {
    const given = findObject((await render(helm, { adminKey: KEY })).objects, 'Deployment');
    expect(findObject((await render(helm, { adminKey: `${KEY}x` })).objects, 'Deployment')).toEqual(given);
    // Generated keys (a new one each `helm template`) too.
    const generated = await render(helm);
    expect(findObject((await render(helm)).objects, 'Deployment')).toEqual(
      findObject(generated.objects, 'Deployment'),
    );
    // A changed key reaches the pod through its Secret volume, mounted whole: the kubelet updates
    // such a volume (never one mounted with subPath), and the simulator reads it again.
    expect(container(generated.objects).volumeMounts).toContainEqual({
      name: 'admin-key',
      mountPath: '/var/run/static-export-simulator',
      readOnly: true,
    });
  });

  it('runs simulate with the key from the mounted Secret and links naming the Service, as non-root on a read-only root', async () => {
    const { objects } = await render(helm);
    const c = container(objects);
    expect(c.args).toEqual([
      'simulate',
      '--host=0.0.0.0',
      '--port=8080',
      '--key-file=/var/run/static-export-simulator/adminKey',
      `--public-url=http://${NAME}.${NS}.svc`,
      '--api-revision=2',
      '--export-duration=5s',
      '--link-ttl=15m',
      '--requests-per-minute=100',
    ]);
    expect(JSON.stringify(c)).not.toContain('mint_');
    expect(podSpec(objects).volumes).toContainEqual({
      name: 'admin-key',
      secret: { secretName: NAME, items: [{ key: 'adminKey', path: 'adminKey' }] },
    });
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
    });
    expect(podSpec(objects).securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(c.readinessProbe.tcpSocket).toEqual({ port: 'http' });
    expect(c.livenessProbe.tcpSocket).toEqual({ port: 'http' });
    expect(podSpec(objects).automountServiceAccountToken).toBe(false);
  });

  it('maps every setting to a flag simulate knows: another port, release name, public URL, docs ConfigMap', async () => {
    const { objects } = await render(
      helm,
      {
        service: { port: 8080 },
        docs: { configMap: 'my-docs' },
        exportDuration: '1s',
        linkTtl: '2m',
        requestsPerMinute: 0,
        logLevel: 'debug',
        apiRevision: 1,
      },
      'sim',
    );
    const c = container(objects);
    expect(c.args).toContain('--api-revision=1');
    expect(container((await render(helm, {})).objects).args).toContain('--api-revision=2');
    expect(c.args).toContain('--public-url=http://sim-static-export-simulator.docs.svc:8080');
    expect(c.args).toContain('--docs=/var/run/static-export-simulator-docs');
    expect(c.env).toContainEqual({ name: 'STATIC_EXPORT_LOG_LEVEL', value: 'debug' });
    expect(podSpec(objects).volumes).toContainEqual({ name: 'docs', configMap: { name: 'my-docs' } });
    const publicUrl = container((await render(helm, { publicUrl: 'https://sim.example.com/' })).objects).args;
    expect(publicUrl).toContain('--public-url=https://sim.example.com');
    const { stdout: help } = await runCli(['simulate', '--help']);
    const [command, ...flags] = c.args as string[];
    expect(command).toBe('simulate');
    for (const flag of flags) expect(help, `${flag} is no simulate flag`).toContain(`${flag.split('=')[0]} `);
  });

  it.each([
    ['a public URL with a path', { publicUrl: 'http://sim.example.com/api' }, 'publicUrl'],
    ['a duration without a unit', { exportDuration: '5' }, 'exportDuration'],
    ['an unknown log level', { logLevel: 'loud' }, 'logLevel'],
    ['an API revision the simulator does not serve', { apiRevision: 3 }, 'apiRevision'],
    ['a ConfigMap name that is no object name', { docs: { configMap: 'My Docs' } }, 'configMap'],
    ['a value the chart does not have', { replicaCount: 2 }, 'replicaCount'],
  ])('refuses %s, naming the field', async (_what, values, field) => {
    const bad = await render(helm, values);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(field);
  });

  it('has helm test export through the Service with the Secret key; none when tests are off', async () => {
    const { tests } = await render(helm, { tests: { enabled: true, timeoutSeconds: 90 } });
    const pod = findObject(tests, 'Pod');
    expect(pod.metadata.labels?.['app.kubernetes.io/name']).toBe('static-export-simulator-test');
    expect(pod.spec.containers[0].args).toEqual(
      expect.arrayContaining([
        'export',
        `--api-url=http://${NAME}.${NS}.svc`,
        '--key-file=/var/run/static-export-simulator/adminKey',
        '--timeout=90s',
      ]),
    );
    // Revision 2, the default, knows no domains: the test pod exports a project.
    expect(pod.spec.containers[0].args).toContain('--project-id=helm-test');
    expect(pod.spec.containers[0].args.some((a: string) => a.startsWith('--domain'))).toBe(false);
    const v1 = findObject((await render(helm, { apiRevision: 1 })).tests, 'Pod').spec.containers[0].args;
    expect(v1).toContain('--domain=docs.example.com');
    expect((await render(helm, { tests: { enabled: false, timeoutSeconds: 90 } })).tests).toEqual([]);
  });
});

/** A rendered container's args with the pod's /tmp moved to `tmp` and its Secret volume to `keyDir`. */
function localArgs(
  args: string[],
  tmp: string,
  keyDir: string,
  replace: Record<string, string> = {},
): string[] {
  return args.map((a) => {
    let out = a.replace(/=\/tmp\//, `=${tmp}/`).replace('=/var/run/static-export-simulator/', `=${keyDir}/`);
    for (const [from, to] of Object.entries(replace)) out = out.replace(from, to);
    return out;
  });
}

/** The status of an admin request with `key`: 404 (no such job) when the key is accepted, 401 when not. */
/** The status of a job no export has, in the chart's default revision (2: by project). */
async function statusWith(baseUrl: string, key: string): Promise<number> {
  const res = await fetch(`${baseUrl}/v1/static-export/docs/jobs/000000000000000000000000`, {
    headers: { authorization: `Bearer ${key}` },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the rendered commands, run as local processes', () => {
  it('serve the admin API with the Secret key, and the helm test export downloads from the public URL', async () => {
    const port = await freePort();
    const local = `http://127.0.0.1:${port}`;
    // This machine stands in for the pod: the public URL is where it is reached from here.
    const { objects, tests } = await render('helm4', { containerPort: port, publicUrl: local });
    const dir = await scratchDir('simulator-');
    const keyDir = await scratchDir('simulator-key-');
    await writeSecretVolume(keyDir, { adminKey: secretKey(objects) });
    const child = spawn(NODE, [MAIN, ...localArgs(container(objects).args, dir, keyDir)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    const printed: string[] = [];
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (l) => printed.push(l));
    await Promise.race([
      once(lines, 'line'),
      once(child, 'exit').then(([code]) => {
        throw new Error(`the simulator exited with ${code} before it listened`);
      }),
    ]);
    const exportArgs = localArgs(findObject(tests, 'Pod').spec.containers[0].args, dir, keyDir, {
      [`http://${NAME}.${NS}.svc`]: local,
    });
    const exported = await runCli(exportArgs);
    expect(exported.code, exported.stderr).toBe(0);
    // The test pod's log shows neither the key nor the link's signature.
    expect(exported.stdout + exported.stderr).not.toContain(secretKey(objects));
    expect(exported.stdout + exported.stderr).not.toMatch(/sig=/);
    expect(await readdir(join(dir, 'site'))).toContain('index.html');

    // The Secret changed (helm upgrade --set adminKey=…): once the kubelet has updated the volume,
    // the running simulator takes the new key, and the helm test export with it passes.
    const rotated = (await render('helm4', { containerPort: port, publicUrl: local, adminKey: KEY })).objects;
    await writeSecretVolume(keyDir, { adminKey: secretKey(rotated) });
    const deadline = Date.now() + 20_000;
    while ((await statusWith(local, KEY)) !== 404) {
      expect(Date.now(), 'the new key accepted in time').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await statusWith(local, secretKey(objects))).toBe(401);
    const again = await scratchDir('simulator-');
    const reexported = await runCli(
      localArgs(findObject(tests, 'Pod').spec.containers[0].args, again, keyDir, {
        [`http://${NAME}.${NS}.svc`]: local,
      }),
    );
    expect(reexported.code, reexported.stderr).toBe(0);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    children.delete(child);
    expect(code).toBe(0);
    // The pod's log holds no key.
    expect(printed.join('\n')).not.toContain(secretKey(objects));
    expect(printed.join('\n')).not.toContain(KEY);
    expect(printed.join('\n')).toContain(`Bundle links point at ${local}`);
  }, 120_000);
});
