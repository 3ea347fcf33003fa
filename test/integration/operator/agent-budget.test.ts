// The hourly agent-job limit is shared by all AgentJobs of a project and survives an operator
// restart: the new process counts the jobs the old one created (from their status).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentJob } from '../../../src/crd/index.ts';
import { createNamespace, eventually, installCrds, kubectl, kubectlOk } from '../../support/kube.ts';
import { type Harness, startHarness } from '../../support/operator.ts';
import { applyAgentJob, getAgentJob } from '../../support/resources.ts';

let ns: string;
let h: Harness;

beforeAll(async () => {
  await installCrds();
  ns = await createNamespace('budget');
  h = await startHarness({
    namespaces: [ns],
    sim: { agentJobDurationMs: 500 },
    operator: { agentJobsPerHour: 2 },
  });
  await kubectlOk([
    'create',
    'secret',
    'generic',
    'admin-key',
    '-n',
    ns,
    `--from-literal=apiKey=${h.sim.adminKey}`,
  ]);
});

afterAll(async () => {
  await h?.stop();
  await kubectl(['delete', 'namespace', ns, '--wait=false']);
});

const createJob = (name: string) => applyAgentJob(ns, name, 'proj-shared', `Task ${name}`);
const getJob = (name: string) => getAgentJob(ns, name);
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
