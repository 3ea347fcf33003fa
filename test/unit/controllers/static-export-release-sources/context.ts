// What a source's tests lend it: a Kubernetes API that holds no object (every read a 404, each
// recorded; what is created is kept), a registry of share groups, and a reconcile whose writes and
// failures are recorded.
import { afterFailure, type Failure } from '../../../../src/controllers/failures.ts';
import type { Loaded } from '../../../../src/controllers/skeleton.ts';
import {
  DEFAULT_TUNABLES,
  type Folded,
  type Status,
} from '../../../../src/controllers/static-export-release/model.ts';
import { SharedExports } from '../../../../src/controllers/static-export-release/shared-exports.ts';
import type {
  ReleaseRun,
  SourceContext,
} from '../../../../src/controllers/static-export-release/sources/source.ts';
import type { StaticExportRelease } from '../../../../src/crd/index.ts';
import { KubeApiError, type KubeClient } from '../../../../src/runtime/kube-client.ts';
import { NOW } from '../../../support/release-fixtures.ts';

export interface Lent {
  ctx: SourceContext;
  shared: SharedExports;
  /** Paths read from the Kubernetes API. */
  reads: string[];
  /** Objects created through it. */
  created: { data?: Record<string, string> }[];
  committed: Folded[];
  failed: { status: Status; failure: Failure }[];
}

export function lent(): Lent {
  const reads: string[] = [];
  const absent = async (path: string) => {
    reads.push(path);
    throw new KubeApiError(404, 'NotFound', `${path} not found`);
  };
  const created: Lent['created'] = [];
  const kube = {
    get: absent,
    request: (_method: string, path: string) => absent(path),
    create: async (_path: string, body: Lent['created'][number]) => {
      created.push(body);
      return body;
    },
  } as unknown as KubeClient;
  const shared = new SharedExports();
  const committed: Folded[] = [];
  const failed: Lent['failed'] = [];
  const ctx: SourceContext = {
    options: {
      kube,
      shared,
      clients: {} as never,
      events: {} as never,
      logger: {} as never,
      cache: {} as never,
      // The operator's cache holds no labelled workload: none is listed.
      labelledWorkloads: () => false,
    },
    tunables: DEFAULT_TUNABLES,
    commit: async (_run, step) => {
      committed.push(step);
    },
    fail: async (_run, status, failure) => {
      failed.push({ status, failure });
      return afterFailure(failure);
    },
  };
  return { ctx, shared, reads, created, committed, failed };
}

/** The skeleton's load of `release` at NOW. */
export const loaded = (
  release: StaticExportRelease,
  extra: Omit<Loaded<StaticExportRelease>, 'now' | 'obj'> = {},
): Loaded<StaticExportRelease> => ({ now: NOW, obj: release, ...extra });

/** A reconcile of `release` whose decided status was written. */
export const run = (release: StaticExportRelease, status: Status): ReleaseRun =>
  ({
    obj: release,
    now: NOW,
    record: { status },
    signal: undefined,
    events: [],
    unsent: [],
  }) as unknown as ReleaseRun;
