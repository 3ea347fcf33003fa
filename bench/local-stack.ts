// The local stack the operator benchmarks share: a scratch directory, the local control plane, a
// simulator, and the operator from the built CLI, with the CRDs installed and an `admin-key`
// Secret holding the simulator's key in one namespace. Nothing else is set up here (workloads,
// releases and watches are each benchmark's own).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlane } from '../scripts/control-plane/control-plane.ts';
import { type LocalOperator, localOperatorArgs } from '../scripts/operator-args.ts';
import { GROUP_VERSION, SER_PLURAL } from '../src/crd/index.ts';
import { KubeClient, resourcePath } from '../src/runtime/kube-client.ts';
import { type Simulator, type SimulatorOptions, startSimulator } from '../src/simulator/index.ts';
import { buildCli, ROOT } from './build.ts';

export interface LocalStackOptions {
  /** Prefix of the scratch directory under the system temp directory. */
  prefix: string;
  /** The simulator's options, given the scratch directory (for files it should read). */
  simulator: (dir: string) => SimulatorOptions;
  /** Created, with the `admin-key` Secret in it. */
  namespace: string;
  /** Operator settings beyond the kubeconfig, simulator, work directory and log level `warn`. */
  operator?: Pick<LocalOperator, 'apiRequestsPerMinute'>;
  /** Node arguments before the CLI (a CPU profile, say). */
  nodeArgs?: string[];
  /** Start the real node too, before the simulator (which may listen on its bridge address). */
  node?: boolean;
  /** Operator arguments after the local ones. */
  operatorArgs?: string[];
  /** kubectl's output buffer (listing thousands of releases needs more than the default). */
  maxBuffer?: number;
}

export interface LocalStack {
  dir: string;
  cp: ControlPlane;
  sim: Simulator;
  operator: ChildProcess;
  /**
   * Runs kubectl without blocking this process: the simulator and the benchmark's watch live here,
   * and a platform does not stop answering while someone creates releases.
   */
  kubectl: (args: string[], input?: string) => Promise<string>;
  /** Stops the operator (waiting up to `exitWaitMs` for it to exit), the simulator and the control plane. */
  stop: (exitWaitMs?: number) => Promise<void>;
}

export async function startLocalStack(o: LocalStackOptions): Promise<LocalStack> {
  const cli = await buildCli();
  const dir = mkdtempSync(join(tmpdir(), o.prefix));
  const simOptions = o.simulator(dir);
  const cp = await ControlPlane.start(join(dir, 'cluster'));
  if (o.node) await cp.startNode();
  const sim = await startSimulator(simOptions);
  const kubectl = (args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const child = execFile(
        join(ROOT, '.tools/bin/kubectl'),
        ['--kubeconfig', cp.kubeconfig, ...args],
        { encoding: 'utf8', ...(o.maxBuffer ? { maxBuffer: o.maxBuffer } : {}) },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || error.message}`))
            : resolve(stdout),
      );
      child.stdin?.end(input);
    });
  const operator = spawn(
    process.execPath,
    [
      ...(o.nodeArgs ?? []),
      cli,
      ...localOperatorArgs({
        kubeconfig: cp.kubeconfig,
        apiBaseUrl: sim.baseUrl,
        workDir: join(dir, 'work'),
        logLevel: 'warn',
        ...o.operator,
      }),
      ...(o.operatorArgs ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const stop = async (exitWaitMs = 0) => {
    const exited = new Promise((resolve) => operator.once('exit', resolve));
    operator.kill('SIGTERM');
    if (exitWaitMs > 0) await Promise.race([exited, sleep(exitWaitMs)]);
    await sim.close();
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await kubectl(['apply', '--server-side', '-f', join(ROOT, 'crds')]);
    await kubectl(['wait', '--for=condition=Established', '-f', join(ROOT, 'crds')]);
    await kubectl(['create', 'namespace', o.namespace]);
    await kubectl([
      '-n',
      o.namespace,
      'create',
      'secret',
      'generic',
      'admin-key',
      `--from-literal=apiKey=${sim.adminKey}`,
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, cp, sim, operator, kubectl, stop };
}

/** `count` releases site-0… in namespace bench, release i exporting `domain(i)` with the admin key. */
export const benchReleases = (count: number, domain: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => ({
    apiVersion: GROUP_VERSION,
    kind: 'StaticExportRelease',
    metadata: { name: `site-${i}`, namespace: 'bench' },
    spec: {
      domain: domain(i),
      credentialsSecretRef: { name: 'admin-key' },
      target: { valuesSecret: { name: `site-${i}-values` } },
    },
  }));

/**
 * Creates `releases` in namespace bench as fast as the API server takes them (a few requests in
 * flight). Not `kubectl create`: its client-side rate limit (about 50 requests a second after a
 * burst) spread 1,000 creations over 22 s (6 s this way), so what followed was partly kubectl's
 * pace rather than the operator's.
 */
export async function createReleases(
  kubeconfig: string,
  releases: ReturnType<typeof benchReleases>,
  inFlight = 8,
): Promise<void> {
  const kube = await KubeClient.create(kubeconfig);
  const path = resourcePath(GROUP_VERSION, SER_PLURAL, 'bench');
  let next = 0;
  const worker = async () => {
    while (next < releases.length) await kube.request('POST', path, { body: releases[next++] });
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, worker));
  } finally {
    await kube.close();
  }
}
