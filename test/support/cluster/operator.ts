// An operator under test: the real controllers in this process (or a child process, for kill
// tests), a simulator over loopback HTTP, and log capture to check that no secret leaks.
import { Writable } from 'node:stream';
import { type RunningOperator, startOperator } from '../../../src/controllers/manager.ts';
import { createLogger } from '../../../src/log.ts';
import {
  DEFAULT_DOCS_DIR,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../../src/simulator/index.ts';
import { sampleDocsCopy, tempDir } from '../temp.ts';
import { kubeconfig } from './kube.ts';

export interface Harness {
  sim: Simulator;
  operator: RunningOperator;
  logs: string[];
  /** Where the operator downloads bundles (removed when the test file is done). */
  workDir: string;
  /** The docs the simulator serves: with `editableDocs`, its own copy the test may change. */
  docsDir: string;
  /**
   * Stops the operator and starts a new one against the same simulator and cluster; `drainMs` 0
   * aborts in-flight reconciles at once, as losing leadership does; `whileDown` runs between the two
   * (changes the new operator finds when it starts).
   */
  restartOperator(drainMs?: number, whileDown?: () => Promise<unknown>): Promise<void>;
  /** `drainMs` as for the operator's stop: how long in-flight reconciles may finish. */
  stop(drainMs?: number): Promise<void>;
}

export function captureLogs(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, stream };
}

type OperatorOverrides = Partial<Parameters<typeof startOperator>[0]>;

export interface HarnessOptions {
  namespaces: string[];
  sim?: SimulatorOptions;
  /** Serve a copy of the sample docs the test may edit (removed when the test file is done). */
  editableDocs?: boolean;
  /** A function when the overrides depend on the simulator (its base URL). */
  operator?: OperatorOverrides | ((sim: Simulator) => OperatorOverrides);
}

export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const docsDir = opts.editableDocs ? sampleDocsCopy() : DEFAULT_DOCS_DIR;
  const sim = await startSimulator({ exportDurationMs: 1_500, linkTtlSeconds: 600, docsDir, ...opts.sim });
  const { lines, stream } = captureLogs();
  const workDir = tempDir('static-export-work-');
  const overrides = typeof opts.operator === 'function' ? opts.operator(sim) : opts.operator;
  const start = () =>
    startOperator({
      logger: createLogger({ level: 'debug', destination: stream }),
      kubeconfig: kubeconfig(),
      namespaces: opts.namespaces,
      concurrency: 4,
      metricsHost: '127.0.0.1',
      metricsPort: 0,
      apiBaseUrl: sim.baseUrl,
      workDir,
      queue: { baseDelayMs: 200, maxDelayMs: 2_000 },
      apiRetry: { attempts: 2, baseDelayMs: 50, maxDelayMs: 200 },
      ...overrides,
    });
  const harness: Harness = {
    sim,
    operator: await start(),
    logs: lines,
    workDir,
    docsDir,
    async restartOperator(drainMs, whileDown) {
      await harness.operator.stop(drainMs);
      await whileDown?.();
      harness.operator = await start();
    },
    async stop(drainMs) {
      await harness.operator.stop(drainMs);
      await sim.close();
    },
  };
  return harness;
}
