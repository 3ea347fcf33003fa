// A real Prometheus server (built from its Go module by scripts/go-tools/build.sh) on loopback with
// its own storage: scrapes static targets every second, evaluates a rule file every second, and
// answers queries and alerts through its HTTP API as dashboards and Alertmanager would read them.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../tools/chart.ts';
import { goTool } from '../tools/go-tools.ts';

export interface ScrapeJob {
  job: string;
  targets: string[];
  /** Target labels, e.g. the namespace a ServiceMonitor adds. */
  labels?: Record<string, string>;
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

export interface TestPrometheus {
  url: string;
  /** An instant query's vector. */
  query(expr: string): Promise<Sample[]>;
  /** Active alerts (pending and firing). */
  alerts(): Promise<Alert[]>;
  /** Prometheus's own log, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`Prometheus answered ${res.status}: ${body.error}`);
  return body.data;
}

export async function startPrometheus(
  jobs: ScrapeJob[],
  dir: string,
  ruleFiles: string[] = [],
): Promise<TestPrometheus> {
  const binary = await goTool('prometheus');
  const storage = await mkdtemp(join(tmpdir(), 'static-export-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: jobs.map((j) => ({
        job_name: j.job,
        // As the chart's ServiceMonitor: the operator's own namespace label wins over the target's.
        honor_labels: true,
        static_configs: [{ targets: j.targets, ...(j.labels ? { labels: j.labels } : {}) }],
      })),
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${config}`, `--storage.tsdb.path=${storage}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const keep = (d: Buffer) => {
    log = (log + d).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const close = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(storage, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited with ${child.exitCode}:\n${log}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus was not ready within 30 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    query: async (expr) =>
      (await api<{ result: Sample[] }>(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    alerts: async () => (await api<{ alerts: Alert[] }>(`${url}/api/v1/alerts`)).alerts,
    output: () => log,
    close,
  };
}
