// The `static-export operator` arguments for a local run (demo, benchmark, tests): loopback
// metrics on a free port, a scratch work directory, the simulator as the admin API.
export interface LocalOperator {
  kubeconfig: string;
  apiBaseUrl: string;
  workDir: string;
  /** Watch these namespaces only; all when absent. */
  namespaces?: string[];
  logLevel?: 'debug' | 'info' | 'warn';
  /** The operator's own admin API request limit; its default when absent, 0 for none. */
  apiRequestsPerMinute?: number;
  /** Serve the trigger receiver on loopback (a free port, logged as triggerPort), this many calls per release and minute. */
  trigger?: { requestsPerMinute: number };
  /** Lease timings in seconds; without them leader election is off. */
  lease?: { namespace: string; duration: number; renewDeadline: number; retryPeriod: number };
}

export function localOperatorArgs(o: LocalOperator): string[] {
  return [
    'operator',
    '--kubeconfig',
    o.kubeconfig,
    ...(o.namespaces ? ['--namespaces', o.namespaces.join(',')] : []),
    '--api-base-url',
    o.apiBaseUrl,
    '--metrics-address',
    '127.0.0.1:0',
    '--work-dir',
    o.workDir,
    ...(o.logLevel ? ['--log-level', o.logLevel] : []),
    ...(o.apiRequestsPerMinute === undefined
      ? []
      : ['--api-requests-per-minute', String(o.apiRequestsPerMinute)]),
    ...(o.trigger
      ? [
          '--trigger-address',
          '127.0.0.1:0',
          '--trigger-requests-per-minute',
          String(o.trigger.requestsPerMinute),
        ]
      : []),
    ...(o.lease
      ? [
          '--lease-namespace',
          o.lease.namespace,
          '--lease-duration',
          `${o.lease.duration}s`,
          '--renew-deadline',
          `${o.lease.renewDeadline}s`,
          '--retry-period',
          `${o.lease.retryPeriod}s`,
        ]
      : ['--no-leader-election']),
  ];
}
