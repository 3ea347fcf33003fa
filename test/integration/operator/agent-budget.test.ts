// The hourly agent-job limit is shared by all AgentJobs of a project and survives an operator
// restart: the new process counts the jobs the old one created (from their status).
import { describe, expect, it } from 'vitest';
import type { AgentJob } from '../../../src/crd/index.ts';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyAgentJob, getAgentJob } from '../../support/cluster/resources.ts';

const h = useOperatorSuite({
  namespaces: ['budget'],
  sim: { agentJobDurationMs: 500 },
  operator: { agentJobsPerHour: 2 },
});

const createJob = (name: string) => applyAgentJob(h.ns, name, 'proj-shared', `Task ${name}`);
const getJob = (name: string) => getAgentJob(h.ns, name);
const reason = (j: AgentJob) => j.status?.conditions?.find((c) => c.type === 'Ready')?.reason;

describe('shared agent job budget', () => {
  it('makes the third job of the hour wait, also after a restart, without calling the API', async () => {
    await createJob('one');
    await createJob('two');
    await eventually('two created', async () => (await getJob('two')).status?.jobId);
    await eventually('one created', async () => (await getJob('one')).status?.jobId);

    await h.restartOperator();
    await createJob('three');
    const waiting = await eventually('three waits', async () => {
      const j = await getJob('three');
      return reason(j) === 'WaitingForBudget' ? j : undefined;
    });
    expect(waiting.status?.jobId).toBeUndefined();
    expect(h.sim.agentJobsCreated('proj-shared')).toBe(2);
    expect(h.sim.requests.filter((r) => r.endpoint === 'agent-create' && r.status === 429)).toHaveLength(0);
  });
});
