import { type Rule, rule } from '../../rule-ladder.ts';
import type { Decision, RegistryCase } from '../release-model.ts';

/** The target no longer holds the served reference: written again from status. */
export const ociRewrite: Rule<RegistryCase, Decision> = rule('ociRewrite', ({ o, status }) =>
  status.current?.version && o.targetDrifted
    ? { action: { kind: 'rewrite' }, status, events: [] }
    : undefined,
);
