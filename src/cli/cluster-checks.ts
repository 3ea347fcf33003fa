// What `static-export check` judges, from the objects it read: the CRDs this CLI speaks, installed and
// established, and an operator running (its Lease held, or a Ready pod when it runs without one).
import { API_GROUP, API_VERSION } from '../crd/common.ts';
import type { LeaseSpec } from '../runtime/leader-election.ts';
import { CRD_FIX } from './kube.ts';

export interface CheckResult {
  check: string;
  ok: boolean;
  /** Not run (e.g. no admin key given); ok stays true. */
  skipped?: boolean;
  message: string;
}

export interface CrdObject {
  spec?: { versions?: { name: string; served?: boolean }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

export const CRD_NAMES = [`staticexportreleases.${API_GROUP}`, `agentjobs.${API_GROUP}`] as const;

/** A CRD (undefined: not found) as this CLI needs it: established, serving API_VERSION. */
export function crdCheck(name: string, crd: CrdObject | undefined): CheckResult {
  const check = `CRD ${name}`;
  if (!crd) return { check, ok: false, message: `not installed: ${CRD_FIX}` };
  const served = (crd.spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name);
  if (!served.includes(API_VERSION))
    return {
      check,
      ok: false,
      message: `serves ${served.join(', ') || 'no version'}, not ${API_VERSION} that this CLI speaks: ${CRD_FIX}, from the same release as this CLI`,
    };
  const established = crd.status?.conditions?.find((c) => c.type === 'Established');
  if (established?.status !== 'True') {
    const why =
      established?.message ?? crd.status?.conditions?.find((c) => c.type === 'NamesAccepted')?.message;
    return {
      check,
      ok: false,
      message: `not established yet${why ? ` (${why})` : ''}: the API server does not serve it; wait, or see kubectl describe crd ${name}`,
    };
  }
  return { check, ok: true, message: `${API_VERSION} established` };
}

export interface PodObject {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

interface OperatorSeen {
  namespace: string;
  leaseName: string;
  /** The Lease (undefined: not found). */
  lease: LeaseSpec | undefined;
  /** The operator's pods (by the chart's app.kubernetes.io/name label). */
  pods: readonly PodObject[];
  now: Date;
}

const isReady = (p: PodObject) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * A Lease counts as held while renewed within twice its duration: this machine's clock is not the
 * cluster's, and a leader renews every few seconds, so a small skew must not make it look gone.
 */
function leaseHeld(lease: LeaseSpec | undefined, now: Date): boolean {
  if (!lease?.holderIdentity || !lease.renewTime) return false;
  const durationMs = (lease.leaseDurationSeconds ?? 15) * 1000;
  return Date.parse(lease.renewTime) + 2 * durationMs >= now.getTime();
}

export function operatorCheck(o: OperatorSeen): CheckResult {
  const check = 'operator';
  const where = `Lease ${o.namespace}/${o.leaseName}`;
  const ready = o.pods.filter(isReady).map((p) => p.metadata.name);
  if (leaseHeld(o.lease, o.now))
    return { check, ok: true, message: `running: ${o.lease?.holderIdentity} holds the ${where}` };
  if (!o.lease && ready.length > 0)
    return { check, ok: true, message: `running without leader election: pod ${ready.join(', ')} Ready` };
  if (o.lease) {
    const last = o.lease.holderIdentity
      ? `${o.lease.holderIdentity} last renewed it at ${o.lease.renewTime ?? 'an unknown time'}`
      : 'it was released';
    return {
      check,
      ok: false,
      message: `not running: nobody holds the ${where} (${last}); ${ready.length} Ready pod(s): see kubectl -n ${o.namespace} get pods,events and the operator's logs`,
    };
  }
  return {
    check,
    ok: false,
    message: `not running: no ${where} and no Ready pod labelled app.kubernetes.io/name=static-export-operator in ${o.namespace}: install the operator chart there, or name where it runs with --operator-namespace and --lease-name`,
  };
}

/** A check whose read RBAC forbade (`what`: the verb, resource and where). */
export function forbiddenCheck(check: string, what: string): CheckResult {
  return {
    check,
    ok: false,
    message: `you may not ${what} (403): ask for it, or run check with an account that may read the CRDs, and the Lease and pods in --operator-namespace (helm test's account may)`,
  };
}
