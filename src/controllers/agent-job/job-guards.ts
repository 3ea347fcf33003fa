// The rules that hold back the rest of the AgentJob's ladder: being deleted, and a problem found
// before any API call (spec, key Secret).
import { failed, none } from '../decision-shape.ts';
import { type Rule, rule } from '../rule-ladder.ts';
import type { Decision, JobCase } from './agent-job-model.ts';

/** Being deleted: nothing more is done, nothing is written. */
export const deleting: Rule<JobCase, Decision> = rule('deleting', ({ o: { job } }) =>
  job.metadata.deletionTimestamp ? none(job.status ?? {}) : undefined,
);

/** A problem found before the calls (spec, Secret, key): nothing else is attempted. */
export const blocked: Rule<JobCase, Decision> = rule('blocked', ({ o, status }) =>
  o.blocked ? failed(status, o.blocked) : undefined,
);
