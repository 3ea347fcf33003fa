// The kinds of target, one file each, and the one a release's spec.target names.
import { argoTarget } from './argo-application.ts';
import { fluxTarget } from './flux-helm-release.ts';
import type { Target, TargetContext } from './target.ts';
import { valuesSecretTarget } from './values-secret.ts';

/** Each kind's factory, or undefined when the spec names another kind. */
const KINDS: readonly ((c: TargetContext) => Target | undefined)[] = [
  valuesSecretTarget,
  fluxTarget,
  argoTarget,
];

export function targetFor(c: TargetContext): Target {
  for (const kind of KINDS) {
    const target = kind(c);
    if (target) return target;
  }
  throw new Error('spec.target names no target (the CRD requires one)');
}
