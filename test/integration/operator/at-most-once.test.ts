// Calls the platform must get at most once (it has no idempotency key): an agent job's create and
// an export's start are marked in status with a compare-and-swap before they are sent. On the real
// API server: a stale resourceVersion is refused, two operators never both create, and a start
// whose answer could not be recorded is reported and waited out instead of repeated.
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { AgentJobReconciler } from '../../../src/controllers/agent-job/agent-job-reconciler.ts';
import { ApiClients } from '../../../src/controllers/credentials.ts';
import { StatusRecord } from '../../../src/controllers/status-record.ts';
import { type AgentJob, type AgentJobStatus, AJ_PLURAL, GROUP_VERSION } from '../../../src/crd/index.ts';
import { createLogger } from '../../../src/log.ts';
import { KubeApiError, type KubeClient, resourcePath } from '../../../src/runtime/kube-client.ts';
import { eventsFor, eventually, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { captureLogs } from '../../support/cluster/operator.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyAgentJob, applyRelease, getAgentJob, getRelease } from '../../support/cluster/resources.ts';

// No operator watches this namespace: the tests drive reconcilers and writes themselves.
const suite = useOperatorSuite({
  namespaces: ['once'],
  sim: { agentJobDurationMs: 60_000 },
  operator: false,
  kubeClient: true,
});

const jobPath = (name: string) => resourcePath(GROUP_VERSION, AJ_PLURAL, suite.ns, name);

describe('status compare-and-swap', () => {
  it('a status write from a stale read is refused with 409; one from the latest read or write goes through', async () => {
    await applyAgentJob(suite.ns, 'cas', 'proj-cas', 'Fix a typo');
    const read = await suite.kube.get<AgentJob>(jobPath('cas'));
    const record = new StatusRecord<AgentJobStatus>(suite.kube, AJ_PLURAL, read);
    await record.write({ state: 'first' }, { ifUnchanged: true });
    // Its own write does not make the next one stale.
    await record.write({ state: 'second' }, { ifUnchanged: true });

    const stale = new StatusRecord<AgentJobStatus>(suite.kube, AJ_PLURAL, read);
    const refused = await stale.write({ state: 'stale' }, { ifUnchanged: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).status).toBe(409);
    expect((await getAgentJob(suite.ns, 'cas')).status?.state).toBe('second');

    // An outcome that must be recorded whatever happened meanwhile is written without the precondition.
    await stale.write({ state: 'recorded' });
    expect((await getAgentJob(suite.ns, 'cas')).status?.state).toBe('recorded');
  });
});

describe('AgentJob', () => {
  function reconciler(client: KubeClient): AgentJobReconciler {
    const logger = createLogger({ level: 'debug', destination: captureLogs().stream });
    return new AgentJobReconciler({
      kube: client,
      // Each its own clients and budget, as two operator processes have.
      clients: new ApiClients({ logger, apiBaseUrl: suite.sim.baseUrl }),
      events: { emit: async () => {} },
      logger,
    });
  }

  it('two operators reconciling it at once (a leader handover) create it once', async () => {
    await applyAgentJob(suite.ns, 'handover', 'proj-handover', 'Rewrite the intro');
    // The second operator read the AgentJob before the first one marked it Creating.
    const stale = Object.create(suite.kube) as KubeClient;
    stale.get = async <T>(path: string, signal?: AbortSignal): Promise<T> => {
      const obj = await suite.kube.get<T>(path, signal);
      if (path === jobPath('handover')) {
        const read = (obj as AgentJob).metadata.resourceVersion;
        await eventually(
          'the first operator wrote it',
          async () => (await getAgentJob(suite.ns, 'handover')).metadata.resourceVersion !== read,
        );
      }
      return obj;
    };
    const results = await Promise.all([
      reconciler(suite.kube).reconcile(suite.ns, 'handover'),
      reconciler(stale).reconcile(suite.ns, 'handover'),
    ]);
    expect(suite.sim.agentJobsCreated('proj-handover')).toBe(1);
    // The one that lost the race reconciles again at once, from what is there now.
    expect(results).toContainEqual({ requeueAfterMs: 0 });
    await reconciler(suite.kube).reconcile(suite.ns, 'handover');
    const job = await getAgentJob(suite.ns, 'handover');
    expect(job.status?.jobId).toBeTruthy();
    expect(job.status?.creation).toBeUndefined();
    expect(suite.sim.agentJobsCreated('proj-handover')).toBe(1);
  });
});

describe('AgentJob when the operator stops leading mid-create', () => {
  const h = useOperatorSuite({ namespaces: ['once-lead'], sim: { agentJobDurationMs: 60_000 }, drainMs: 0 });

  it('the create is abandoned and nothing is written after it; the next leader reports CreateOutcomeUnknown', async () => {
    h.sim.configure({ faults: ['agent-create:delay=3000:1'] });
    await applyAgentJob(h.ns, 'cut-short', 'proj-cut', 'Rewrite the intro');
    await eventually(
      'marked Creating',
      async () => (await getAgentJob(h.ns, 'cut-short')).status?.creation?.phase === 'Creating',
    );
    // Lost leadership stops reconciles at once (drain 0); a new leader takes over.
    await h.restartOperator(0);
    const unknown = await eventually('CreateOutcomeUnknown', async () => {
      const j = await getAgentJob(h.ns, 'cut-short');
      const ready = j.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.reason === 'CreateOutcomeUnknown' ? j : undefined;
    });
    // Past the create's delay: an old leader still waiting for it would have written by now.
    await new Promise((r) => setTimeout(r, 4_000));
    const after = await getAgentJob(h.ns, 'cut-short');
    expect(after.status?.jobId).toBeUndefined();
    expect(after.status?.creation).toEqual({
      phase: 'OutcomeUnknown',
      since: unknown.status?.creation?.since,
    });
    expect(h.sim.agentJobsCreated('proj-cut')).toBeLessThanOrEqual(1);
  });
});

describe('StaticExportRelease', () => {
  const h = useOperatorSuite({
    namespaces: ['once-ser'],
    sim: { exportDurationMs: 300 },
    operator: { tunables: { startOutcomeWaitMs: 8_000 } },
  });
  const policy = `deny-export-job-id-${Math.random().toString(36).slice(2, 8)}`;

  afterAll(() => kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policy]));

  /** Whether the API server (its admission) refuses to record an export job id for the release now. */
  const refusesJobId = async (name: string) =>
    (
      await kubectl([
        ...['patch', 'ser', name, '-n', h.ns, '--subresource=status', '--type=merge', '--dry-run=server'],
        ...['-p', '{"status":{"export":{"jobId":"probe"}}}'],
      ])
    ).code !== 0;

  it('a start whose answer cannot be recorded: StartOutcomeUnknown, no second export until the wait is over', async () => {
    const name = 'lost-answer';
    await applyRelease(h.ns, name, { suspend: true });
    // The API server refuses every status write that records an export job id for this release,
    // as if the operator died or lost the API server right after the start call.
    await kubectlOk(
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: policy },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['staticexport.dev'],
                apiVersions: ['*'],
                operations: ['UPDATE'],
                resources: ['staticexportreleases/status'],
              },
            ],
          },
          matchConditions: [
            {
              name: 'this-release',
              expression: `object.metadata.namespace == '${h.ns}' && object.metadata.name == '${name}'`,
            },
          ],
          validations: [
            {
              expression:
                '!has(object.status) || !has(object.status.export) || !has(object.status.export.jobId)',
              message: 'this test refuses to record an export job id',
            },
          ],
        },
      }) +
        '---\n' +
        stringify({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: policy },
          spec: { policyName: policy, validationActions: ['Deny'] },
        }),
    );
    await eventually('the policy in force', () => refusesJobId(name));
    const before = h.sim.exportJobsStarted();

    await applyRelease(h.ns, name, { suspend: false });
    const unknown = await eventually('StartOutcomeUnknown', async () => {
      const r = await getRelease(h.ns, name);
      const ready = r.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.reason === 'StartOutcomeUnknown' ? r : undefined;
    });
    expect(h.sim.exportJobsStarted() - before).toBe(1);
    expect(unknown.status?.start?.phase).toBe('OutcomeUnknown');
    const ready = unknown.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.message).toMatch(/no idempotency key, so it does not start another one before 20\d\d-/);
    expect(unknown.status?.conditions?.find((c) => c.type === 'Stalled')).toBeUndefined();
    expect((await eventsFor(h.ns, name)).map((e) => e.reason)).toContain('StartOutcomeUnknown');

    // The API server records job ids again; after the wait the release starts again, once.
    await kubectlOk(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policy]);
    await eventually('the policy gone', async () => !(await refusesJobId(name)));
    const published = await eventually(
      'Published',
      async () => {
        const r = await getRelease(h.ns, name);
        return r.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Published')
          ? r
          : undefined;
      },
      30_000,
    );
    expect(h.sim.exportJobsStarted() - before).toBe(2);
    expect(published.status?.start).toBeUndefined();
  });
});
