// Reports the served version on the sync's own Pod: a condition in status.conditions (through the
// pods/status subresource) that kstatus-aware tools and the operator read. Readiness stays the
// kubelet's: a failed fetch keeps the old version served, so the pod stays ready.
import type { Logger } from '../log.ts';
import { scrub } from '../redact.ts';
import { type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { CONTENT_SERVED_CONDITION as CONTENT_SERVED } from '../targets/pod-content.ts';

export interface PodCondition {
  type: typeof CONTENT_SERVED;
  status: 'True' | 'False';
  reason: 'Serving' | 'FetchFailed' | 'SecretUnusable';
  message: string;
}

export type SyncOutcome =
  | { kind: 'serving'; version: string }
  | { kind: 'fetchFailed'; served: string | undefined; version: string; cause: string }
  | { kind: 'secretUnusable'; served: string | undefined; problem: string };

const servedText = (served: string | undefined) => `serving ${served ?? 'nothing'}`;

/** The condition an outcome sets; messages go through `scrub`, so a link never reaches the Pod. */
export function conditionFor(outcome: SyncOutcome): PodCondition {
  switch (outcome.kind) {
    case 'serving':
      return {
        type: CONTENT_SERVED,
        status: 'True',
        reason: 'Serving',
        message: `serving ${outcome.version}`,
      };
    case 'fetchFailed':
      return {
        type: CONTENT_SERVED,
        status: 'False',
        reason: 'FetchFailed',
        message: scrub(`${servedText(outcome.served)}; ${outcome.version} failed: ${outcome.cause}`),
      };
    case 'secretUnusable':
      return {
        type: CONTENT_SERVED,
        status: 'False',
        reason: 'SecretUnusable',
        message: scrub(`${servedText(outcome.served)}; ${outcome.problem}`),
      };
  }
}

export interface ConditionSink {
  report(condition: PodCondition): Promise<void>;
}

/** Writes the condition on Pod `namespace/name`; a failed write is logged, never fatal (the next report retries). */
export class PodConditionReporter implements ConditionSink {
  private last: PodCondition | undefined;
  private transitionAt = new Date().toISOString();

  private readonly kube: KubeClient;
  private readonly namespace: string;
  private readonly pod: string;
  private readonly logger: Logger;

  constructor(kube: KubeClient, namespace: string, pod: string, logger: Logger) {
    this.kube = kube;
    this.namespace = namespace;
    this.pod = pod;
    this.logger = logger;
  }

  async report(condition: PodCondition): Promise<void> {
    // Any change is a transition, a new version served at the same status too: the operator counts
    // a condition only when it is newer than the version's publish.
    if (
      this.last?.status !== condition.status ||
      this.last.reason !== condition.reason ||
      this.last.message !== condition.message
    )
      this.transitionAt = new Date().toISOString();
    try {
      // Pod conditions merge by type in a strategic merge patch: the kubelet's own ones stay.
      await this.kube.request('PATCH', `${resourcePath('v1', 'pods', this.namespace, this.pod)}/status`, {
        body: {
          status: {
            conditions: [{ ...condition, lastProbeTime: null, lastTransitionTime: this.transitionAt }],
          },
        },
        contentType: 'application/strategic-merge-patch+json',
      });
      this.last = condition;
    } catch (err) {
      this.logger.warn(
        { err, pod: `${this.namespace}/${this.pod}` },
        `cannot write the ${CONTENT_SERVED} condition on the pod (needs patch on pods/status)`,
      );
    }
  }
}
