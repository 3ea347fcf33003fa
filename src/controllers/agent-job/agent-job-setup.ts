// The AgentJob controller's wiring: its informer, and the key Secrets it watches.
import { type AgentJob, AJ_PLURAL, GROUP_VERSION } from '../../crd/index.ts';
import { type Controller, ignoreStatusOnly, referrerKeys, refIndex } from '../../runtime/controller.ts';
import type { KubeObject } from '../../runtime/informer.ts';
import type { Wiring } from '../wiring.ts';
import { AgentJobReconciler, type AgentJobReconcilerOptions } from './agent-job-reconciler.ts';

type Job = AgentJob & KubeObject;

const KEY_SECRET = 'keySecret';

interface AgentJobSetupOptions extends Omit<AgentJobReconcilerOptions, 'reads'> {
  /** Called once with every AgentJob the cache holds after its first sync. */
  onSynced?: (jobs: readonly AgentJob[]) => void;
}

export function setupAgentJobs(w: Wiring, { onSynced, ...options }: AgentJobSetupOptions): Controller {
  const jobs = w.informer<Job>(GROUP_VERSION, AJ_PLURAL);
  jobs.addIndex(
    KEY_SECRET,
    refIndex<Job>((j) => j.spec.credentialsSecretRef?.name),
  );
  const reconciler = new AgentJobReconciler({ ...options, reads: w.reads(jobs, GROUP_VERSION, AJ_PLURAL) });
  if (onSynced) void jobs.waitForSync().then(() => onSynced(jobs.list()));
  return w
    .controller('agentjob')
    .for(jobs, ignoreStatusOnly)
    .watches(w.secrets, referrerKeys(jobs, KEY_SECRET))
    .complete((ns, n, signal) => reconciler.reconcile(ns, n, signal));
}
