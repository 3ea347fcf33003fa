// `static-export operator`: runs the controllers (in a cluster or against a kubeconfig).
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { startOperator } from '../controllers/manager.ts';
import { createLogger } from '../log.ts';
import { onShutdownSignal } from '../runtime/shutdown.ts';

const positiveInt = (flag: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`${flag} must be a whole number of at least 1`);
  return n;
};

function hostPort(v: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(v);
  const port = Number(m?.[2]);
  if (!m || port > 65535)
    throw new InvalidArgumentError(
      '--metrics-address must be host:port, e.g. 0.0.0.0:8080 (port 0 picks one)',
    );
  return { host: m[1] || '0.0.0.0', port };
}

function httpUrl(v: string): string {
  if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol)) {
    throw new InvalidArgumentError(
      '--api-base-url must be an absolute http(s) URL such as https://api.example.com',
    );
  }
  return v;
}

export function operatorCommand(): Command {
  return new Command('operator')
    .description('Run the StaticExportRelease and AgentJob controllers')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--namespaces <list>', 'comma-separated namespaces to watch (default: all)', (v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .option('--concurrency <n>', 'parallel reconciles per controller', positiveInt('--concurrency'), 4)
    .option('--metrics-address <host:port>', '/metrics, /healthz and /readyz', hostPort, {
      host: '0.0.0.0',
      port: 8080,
    })
    .addOption(
      new Option('--no-leader-election', 'reconcile without taking the Lease (a single replica only)'),
    )
    .option(
      '--lease-namespace <ns>',
      'namespace of the leader election Lease (default: POD_NAMESPACE or default)',
    )
    .option('--lease-name <name>', 'name of the leader election Lease', 'static-export-operator')
    .option(
      '--api-base-url <url>',
      'admin API base URL for resources without spec.apiBaseUrl (env STATIC_EXPORT_API_URL)',
    )
    .option('--key-prefix <prefix>', 'vendor prefix of admin API keys', 'mint')
    .option(
      '--work-dir <dir>',
      'where bundles are downloaded and verified',
      join(tmpdir(), 'static-export-operator'),
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error'])
        .default('info'),
    )
    .action(async (opts) => {
      const logger = createLogger({ level: opts.logLevel, name: 'static-export-operator' });
      mkdirSync(opts.workDir, { recursive: true });
      const apiBaseUrl = opts.apiBaseUrl ?? process.env.STATIC_EXPORT_API_URL;
      const operator = await startOperator({
        logger,
        kubeconfig: opts.kubeconfig,
        namespaces: opts.namespaces ?? [],
        concurrency: opts.concurrency,
        metricsHost: opts.metricsAddress.host,
        metricsPort: opts.metricsAddress.port,
        ...(opts.leaderElection
          ? {
              leaderElection: {
                namespace: opts.leaseNamespace ?? process.env.POD_NAMESPACE ?? 'default',
                name: opts.leaseName,
              },
            }
          : {}),
        ...(apiBaseUrl ? { apiBaseUrl } : {}),
        keyPrefix: opts.keyPrefix,
        workDir: opts.workDir,
      });
      onShutdownSignal([{ name: 'operator', run: () => operator.stop() }], { logger });
    });
}
