import { none } from '../decision.ts';
import type { Observed, Rule } from '../model.ts';

/** Being deleted: nothing more is done (the values Secret goes with it, by owner reference). */
export const deleting: Rule<Observed> = ({ release }) =>
  release.metadata.deletionTimestamp ? none(release.status ?? {}) : undefined;
