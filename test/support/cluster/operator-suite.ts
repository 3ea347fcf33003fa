// The set-up and tear-down an operator integration test file shares, as one call at the top of the
// file (or of a describe): the CRDs, its namespaces (deleted at the end), the simulator and the
// operator in this process (or the simulator alone, for files that run the operator as a child
// process or drive reconcilers themselves), the Secret with the admin key, and at the end the
// check that the key never reached the operator's logs. The file keeps only what is its own.
import { afterAll, beforeAll, expect } from 'vitest';
import { KubeClient } from '../../../src/runtime/kube-client.ts';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../../src/simulator/index.ts';
import { type GITOPS_CRDS, installGitopsCrd } from '../tools/gitops.ts';
import { createNamespace, installCrds, kubeconfig, kubectl } from './kube.ts';
import { type Harness, type HarnessOptions, startHarness } from './operator.ts';
import { ADMIN_KEY_SECRET, applySecret } from './resources.ts';

type Names = readonly string[];
/** A namespace name for each prefix, by position. */
type Named<P extends Names> = { readonly [K in keyof P]: string };

export interface OperatorSuiteOptions<W extends Names, U extends Names> {
  /** Prefixes of the namespaces the file works in (the first is `ns`); the operator watches them. */
  namespaces: W;
  /** Prefixes of namespaces made too, which the operator does not watch. */
  unwatched?: U;
  /** The GitOps tools' real CRDs, installed next to ours. */
  gitopsCrds?: (keyof typeof GITOPS_CRDS)[];
  /** The simulator's options; false: no simulator (nor operator). */
  sim?: SimulatorOptions | false;
  /** Serve a copy of the sample docs the test may edit (`docsDir`); with the operator. */
  editableDocs?: boolean;
  /** Overrides of the operator run in this process; false: none runs (the simulator alone does). */
  operator?: HarnessOptions['operator'] | false;
  /** The Secret holding the simulator's admin key in each watched namespace; null: none. */
  adminKeySecret?: string | null;
  /** A client of the API server, for reads and writes the test makes itself (`kube`). */
  kubeClient?: boolean;
  /** Runs once the namespaces exist, before the simulator and the operator start. */
  beforeStart?: (suite: OperatorSuite<W, U>) => Promise<unknown>;
  /** How long in-flight reconciles may finish when the operator stops at the end. */
  drainMs?: number;
}

export interface OperatorSuite<W extends Names = Names, U extends Names = Names> {
  /** The first watched namespace. */
  readonly ns: string;
  readonly namespaces: Named<W>;
  readonly unwatched: Named<U>;
  readonly sim: Simulator;
  readonly kube: KubeClient;
  /** What the operator logged (JSON lines). */
  readonly logs: string[];
  readonly operator: Harness['operator'];
  readonly docsDir: string;
  readonly workDir: string;
  restartOperator: Harness['restartOperator'];
}

/** Registers the hooks; the accessors work from the first test (or a later beforeAll) on. */
export function useOperatorSuite<const W extends Names, const U extends Names = []>(
  opts: OperatorSuiteOptions<W, U>,
): OperatorSuite<W, U> {
  const made: string[] = [];
  let watched: string[] | undefined;
  let unwatched: string[] | undefined;
  let harness: Harness | undefined;
  let sim: Simulator | undefined;
  let kube: KubeClient | undefined;

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`this operator suite has no ${what} (or is not set up yet)`);
    return value;
  };
  const running = () => need(harness, 'operator');

  beforeAll(async () => {
    await Promise.all([installCrds(), ...(opts.gitopsCrds ?? []).map(installGitopsCrd)]);
    const create = async (prefix: string) => {
      const name = await createNamespace(prefix);
      made.push(name);
      return name;
    };
    const names: string[] = [];
    for (const prefix of opts.namespaces) names.push(await create(prefix));
    const others: string[] = [];
    for (const prefix of opts.unwatched ?? []) others.push(await create(prefix));
    [watched, unwatched] = [names, others];
    await opts.beforeStart?.(suite);
    if (opts.sim !== false && opts.operator !== false) {
      harness = await startHarness({
        namespaces: names,
        ...(opts.sim ? { sim: opts.sim } : {}),
        ...(opts.editableDocs ? { editableDocs: true } : {}),
        ...(opts.operator ? { operator: opts.operator } : {}),
      });
      sim = harness.sim;
    } else if (opts.sim !== false) {
      sim = await startSimulator(opts.sim ?? {});
    }
    const secret = opts.adminKeySecret === undefined ? ADMIN_KEY_SECRET : opts.adminKeySecret;
    if (sim && secret) for (const n of names) await applySecret(n, secret, { apiKey: sim.adminKey });
    if (opts.kubeClient) kube = await KubeClient.create(kubeconfig());
  });

  afterAll(async () => {
    try {
      await kube?.close();
      if (harness) await harness.stop(opts.drainMs);
      else await sim?.close();
    } finally {
      for (const n of made) await kubectl(['delete', 'namespace', n, '--wait=false']);
    }
    if (harness) {
      expect(harness.logs.join('\n'), 'the admin key in the operator log').not.toContain(
        harness.sim.adminKey,
      );
    }
  });

  const suite: OperatorSuite<W, U> = {
    get ns() {
      return need(watched?.[0], 'namespace');
    },
    get namespaces() {
      return need(watched, 'namespaces') as unknown as Named<W>;
    },
    get unwatched() {
      return need(unwatched, 'namespaces') as unknown as Named<U>;
    },
    get sim() {
      return need(sim, 'simulator');
    },
    get kube() {
      return need(kube, 'API client (kubeClient: true)');
    },
    get logs() {
      return running().logs;
    },
    get operator() {
      return running().operator;
    },
    get docsDir() {
      return running().docsDir;
    },
    get workDir() {
      return running().workDir;
    },
    restartOperator: (drainMs, whileDown) => running().restartOperator(drainMs, whileDown),
  };
  return suite;
}
