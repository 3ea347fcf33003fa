// Every action an AgentJob's decision can name, each with its one entry (a missing one does not
// compile): the call, its typed outcome folded by job-creation.ts, then the commit.
import type { AgentJob } from '../../crd/index.ts';
import type { ActionTable, Run } from '../reconciler-base.ts';
import type { ReconcileResult } from '../types.ts';
import type { Action, Observed, Status } from './agent-job-model.ts';
import { afterCreateCall, type CreateOutcome } from './job-creation.ts';

export type AgentJobActions = ActionTable<Observed, Action, AgentJob, Status>;

/** The first poll after creation (agentPollIntervalMs' shortest interval). */
const FIRST_POLL_MS = 2_000;

export const agentJobActions: AgentJobActions = {
  // `status.creation` is stored (by the skeleton, as a compare-and-swap) before this call: a crash
  // or a second operator from here on never creates twice.
  create: { run: (o, _, run) => create(o, run), atMostOnce: true },
};

/** Creates the agent job; its id is recorded first thing after the answer. */
async function create(o: Observed, run: Run<AgentJob, Status>): Promise<ReconcileResult> {
  // The skeleton runs it only with the client the job's credentials gave.
  const { client } = o;
  if (!client) return {};
  let outcome: CreateOutcome;
  try {
    // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a create
    // cut short becomes CreateOutcomeUnknown, never a second job.
    const job = await client.createAgentJob(
      o.job.spec.projectId,
      o.job.spec.prompt,
      run.signal ? { signal: run.signal } : {},
    );
    outcome = { kind: 'created', job };
  } catch (e) {
    if (run.signal?.aborted) throw e;
    outcome = { kind: 'failed', error: e };
  }
  const next = afterCreateCall(o.job, o.now, run.record.status, outcome);
  if ('failure' in next) return run.fail(next.status, next.failure, next.cause);
  await run.commit(next);
  return { requeueAfterMs: FIRST_POLL_MS };
}
