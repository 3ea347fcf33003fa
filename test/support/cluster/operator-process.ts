// The operator as a user runs it, `static-export operator`, in a child process that tests can
// SIGKILL; its JSON log lines are collected for assertions.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { localOperatorArgs } from '../../../scripts/operator-args.ts';
import { tempDir } from '../temp.ts';
import { kubeconfig, ROOT } from './kube.ts';

export interface OperatorProcessOptions {
  namespaces: string[];
  apiBaseUrl: string;
  /** Lease namespace; omitted = --no-leader-election. */
  leaseNamespace?: string;
  /** Serve the trigger receiver on loopback with this per-release limit. */
  trigger?: { requestsPerMinute: number };
  /** Further flags, as a user adds them (e.g. the chart's extraArgs). */
  extraArgs?: string[];
}

export class OperatorProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: { re: RegExp; resolve: (line: string) => void }[] = [];

  private constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts.filter(Boolean)) {
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => {
          if (!w.re.test(line)) return true;
          w.resolve(line);
          return false;
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  }

  static start(o: OperatorProcessOptions): OperatorProcess {
    const args = [
      join(ROOT, 'src', 'cli', 'main.ts'),
      ...localOperatorArgs({
        kubeconfig: kubeconfig(),
        namespaces: o.namespaces,
        apiBaseUrl: o.apiBaseUrl,
        workDir: tempDir('static-export-work-'),
        logLevel: 'debug',
        ...(o.trigger ? { trigger: o.trigger } : {}),
        ...(o.leaseNamespace
          ? { lease: { namespace: o.leaseNamespace, duration: 4, renewDeadline: 3, retryPeriod: 1 } }
          : {}),
      }),
      ...(o.extraArgs ?? []),
    ];
    return new OperatorProcess(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Resolves with the first log line (past or future) matching `re`. */
  waitFor(re: RegExp, timeoutMs = 60_000): Promise<string> {
    const seen = this.lines.find((l) => re.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no log line matching ${re} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiters.push({
        re,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}
