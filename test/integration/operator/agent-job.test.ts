// The AgentJob controller on the real control plane against the simulator.
import { describe, expect, it } from 'vitest';
import type { AgentJob } from '../../../src/crd/index.ts';
import { eventsFor, eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyAgentJob, applySecret, getAgentJob } from '../../support/cluster/resources.ts';

const HOUR = 3_600_000;
const h = useOperatorSuite({ namespaces: ['aj'], sim: { agentJobDurationMs: 1_000, rateLimitPerHour: 2 } });

const createJob = (name: string, projectId: string, prompt: string) =>
  applyAgentJob(h.ns, name, projectId, prompt);
const getJob = (name: string) => getAgentJob(h.ns, name);
const ready = (j: AgentJob) => j.status?.conditions?.find((c) => c.type === 'Ready');
const until = (name: string, what: string, test: (j: AgentJob) => boolean) =>
  eventually(`${name}: ${what}`, async () => {
    const j = await getJob(name);
    return test(j) ? j : undefined;
  });

describe('AgentJob', () => {
  it('creates the job once, records the pull request and announces it', async () => {
    await createJob('fix-typo', 'proj-a', 'Fix the typo on the install page');
    const done = await until('fix-typo', 'completed', (j) => j.status?.state === 'completed');
    expect(done.status?.prLink).toMatch(/^https:\/\/github\.com\/acme\/proj-a-docs\/pull\/\d+$/);
    expect(done.status?.source?.repository).toMatch(/^https:\/\/github\.com\//);
    expect(done.status?.model).toBeTruthy();
    expect(done.status?.createdAt).toBeTruthy();
    expect(ready(done)).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: `Pull request: ${done.status?.prLink}`,
    });
    expect(h.sim.agentJobsCreated('proj-a')).toBe(1);

    expect(await eventsFor(h.ns, 'fix-typo')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ reason: 'Created' }),
        expect.objectContaining({ reason: 'Completed', note: `Pull request: ${done.status?.prLink}` }),
      ]),
    );
    expect(await kubectlOk(['get', 'aj', 'fix-typo', '-n', h.ns])).toContain(done.status?.prLink);
  });

  it('never creates it again across an operator restart', async () => {
    const before = await getJob('fix-typo');
    await h.restartOperator();
    await new Promise((r) => setTimeout(r, 2_000));
    expect(h.sim.agentJobsCreated('proj-a')).toBe(1);
    expect((await getJob('fix-typo')).status).toEqual(before.status);
  });

  it('a rejected key: AuthenticationFailed and nothing created; created once as soon as the Secret is fixed', async () => {
    await applySecret(h.ns, 'old-key', { apiKey: 'mint_revokedkey000000000000000000' });
    await applyAgentJob(h.ns, 'fix-later', 'proj-c', 'Fix the changelog', 'old-key');
    const refused = await until('fix-later', 'refused', (j) => ready(j)?.reason === 'AuthenticationFailed');
    expect(ready(refused)?.message).toContain(`Secret ${h.ns}/old-key`);
    expect(h.sim.agentJobsCreated('proj-c')).toBe(0);

    // The retry delay is 5 min: the watch on the Secret is what acts on the fix.
    await applySecret(h.ns, 'old-key', { apiKey: h.sim.adminKey });
    await until('fix-later', 'created', (j) => Boolean(j.status?.jobId));
    expect(h.sim.agentJobsCreated('proj-c')).toBe(1);
  });

  it('reports a failed agent', async () => {
    await createJob('doomed', 'proj-b', 'Please fail at this');
    const failed = await until('doomed', 'failed', (j) => j.status?.state === 'failed');
    expect(ready(failed)).toMatchObject({ status: 'False', reason: 'AgentFailed' });
  });

  it('waits out a short 429, and waits for the budget after a long one without failing the job', async () => {
    await createJob('first', 'proj-busy', 'One');
    await createJob('second', 'proj-busy', 'Two');
    await until('second', 'created', (j) => Boolean(j.status?.jobId));
    await until('first', 'created', (j) => Boolean(j.status?.jobId));
    // The server's hourly window frees up in 3 s: the client waits that out.
    h.sim.advanceTime(HOUR - 3_000);
    await createJob('third', 'proj-busy', 'Three');
    const third = await until('third', 'created after waiting', (j) => Boolean(j.status?.jobId));
    expect(third.status?.conditions?.some((c) => c.reason === 'RateLimited')).toBe(false);
    expect(h.sim.agentJobsCreated('proj-busy')).toBe(3);

    // The first two have left the hourly window by now: one more fits, the next one waits. A long
    // Retry-After blocks the project's shared budget: the job waits and says until when.
    await createJob('fourth', 'proj-busy', 'Four');
    await until('fourth', 'created', (j) => Boolean(j.status?.jobId));
    await createJob('fifth', 'proj-busy', 'Five');
    const limited = await until('fifth', 'waiting', (j) => ready(j)?.reason === 'WaitingForBudget');
    expect(ready(limited)?.message).toMatch(
      /proj-busy has reached its hourly limit of agent jobs; this job will be created at 20\d\d-/,
    );
    expect(limited.status?.jobId).toBeUndefined();
    // Waiting is progress, not a stall (kstatus: InProgress; Argo CD: Progressing).
    expect(limited.status?.conditions?.find((c) => c.type === 'Stalled')).toBeUndefined();
    expect(limited.status?.conditions?.find((c) => c.type === 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'WaitingForBudget',
    });
    expect(h.sim.agentJobsCreated('proj-busy')).toBe(4);
  });
});
