// observe -> decide -> act for one StaticExportRelease, on the shared skeleton. The release's source
// (sources/) observes; decide-release.ts decides on it (its rules in the feature folders), reading the share group's
// flight as it is at that moment; the claim step reserves the start decided; the action table
// (release-actions.ts) runs the effect of the action for the look's source. The reconciler names no
// source.
import {
  GROUP_VERSION,
  SER_PLURAL,
  type StaticExportRelease,
  staticExportReleaseSpecSchema,
} from '../../crd/index.ts';
import type { Failure } from '../failures.ts';
import { type Loaded, Reconciler, type Reservation } from '../reconciler-base.ts';
import { choose } from './decide-release.ts';
import { type ReleaseActions, releaseActions } from './release-actions.ts';
import { releaseConditions } from './release-conditions.ts';
import {
  type Action,
  DEFAULT_TUNABLES,
  type Decision,
  type PlatformObserved,
  type Status,
  type Tunables,
} from './release-model.ts';
import type { ReleaseReconcilerOptions } from './release-options.ts';
import { closeLook, type Look, type PlatformLook, type SourceContext } from './sources/source.ts';
import { sourceFor } from './sources/source-for.ts';

export class StaticExportReleaseReconciler extends Reconciler<StaticExportRelease, Status, Look, Action> {
  private readonly o: ReleaseReconcilerOptions;
  private readonly sources: SourceContext;
  private readonly tunables: Tunables;
  protected readonly actions: ReleaseActions;

  constructor(options: ReleaseReconcilerOptions) {
    super(options, {
      apiVersion: GROUP_VERSION,
      plural: SER_PLURAL,
      specSchema: staticExportReleaseSpecSchema,
      logKey: 'release',
    });
    this.o = options;
    this.sources = { options };
    this.tunables = options.tunables ?? DEFAULT_TUNABLES;
    this.actions = releaseActions(options, this.tunables);
  }

  protected callsApi(release: StaticExportRelease): boolean {
    return (
      !release.spec.suspend &&
      !release.metadata.deletionTimestamp &&
      sourceFor(this.sources, release).callsApi
    );
  }

  // Deleted: the values Secret goes with it (owner reference); only our own series remain.
  protected override gone(namespace: string, name: string): void {
    this.o.shared.leave(`${namespace}/${name}`);
  }

  protected observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<Look> {
    return sourceFor(this.sources, loaded.obj).observe(loaded, signal);
  }

  protected decide(look: Look): Decision {
    return decideOn(look, this.tunables);
  }

  protected override claim(look: Look, d: Decision): Reservation | undefined {
    return claim(look, d);
  }

  protected conditions(
    release: StaticExportRelease,
    status: Status,
    f: Failure | undefined,
    now: Date,
  ): Status {
    return releaseConditions(release, status, f, now);
  }

  protected override finished(look: Look): void {
    closeLook(look);
  }
}

/**
 * Decides with the share group's export in flight as it is now, and a sibling's (the project's
 * other base path), the claim step following at once; names the rule that chose (the skeleton
 * logs it).
 */
export function decideOn(look: Look, tun: Tunables): Decision {
  const { rule, decision } = choose(look.source === 'platform' ? asNow(look) : look.observed, tun);
  return { ...decision, rule };
}

function asNow({ observed, visit, budget }: PlatformLook): PlatformObserved {
  const flight = visit.flight();
  const sibling = visit.sibling();
  return {
    ...observed,
    ...(flight ? { shared: flight } : {}),
    ...(budget ? { budget: budget.view() } : {}),
    ...(sibling ? { sibling: { release: sibling.release, ...sibling.flight } } : {}),
  };
}

/**
 * What the decision claims, right after it: a start reserves its share group's export and its
 * budget's slot (given back by the skeleton unless the request goes out); a wait for a slot keeps
 * the release's place in the queue, anything else leaves it; an overcommit told is not told again.
 * A poll this reconcile made stays the group's answer until this release polls next.
 */
export function claim(look: Look, d: Decision): Reservation | undefined {
  if (look.source !== 'platform') return undefined;
  const { observed, visit, polled, budget } = look;
  const { now, release } = observed;
  const jobId = release.status?.export?.jobId;
  if (polled && jobId && d.requeueAfterMs !== undefined)
    visit.pollFreshUntil(jobId, now.getTime() + d.requeueAfterMs);
  if (budget) {
    if (d.queue) budget.wait(d.queue);
    else if (d.action.kind !== 'start') budget.forget();
    if (d.tellsOvercommit) budget.announced();
  }
  return d.action.kind === 'start' ? visit.reserveStart(now, budget) : undefined;
}
