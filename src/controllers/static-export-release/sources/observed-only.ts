// The look of a reconcile that opened nothing at its source (a problem found first, suspended, being
// deleted, no usable key): decide reads what was observed, and no action of the source follows.
import { decide } from '../decide.ts';
import type { Observed, Tunables } from '../model.ts';
import type { SourceLook } from './source.ts';

export function observedOnly(observed: Observed, tun: Tunables): SourceLook {
  return {
    observed,
    decide: () => decide(observed, tun),
    act: async () => ({}),
    close: () => {},
  };
}
