// Every action a StaticExportRelease's decision can name, by source: each source's table maps its
// action kinds (release-model.ts) to the effect that performs them, which takes that source's look
// (a platform action gets the share visit and the client by type; a missing entry does not
// compile). Each effect lives with its feature and folds its outcome there. The skeleton runs the
// entry of the action decided, after writing the decided status (see ActionEntry for `atMostOnce`
// and `writesWithOutcome`); its conditions are derived as each status is written.
import type { StaticExportRelease } from '../../crd/index.ts';
import type { ActionTable } from '../reconciler-base.ts';
import type { ReconcileResult } from '../types.ts';
import { publishContent } from './export/publish-content.ts';
import { startExport } from './export/start-export.ts';
import { freshLink } from './link/fresh-link.ts';
import { pullImage, rewriteReference } from './registry/pull-image.ts';
import type { ReleaseRun } from './release-effect.ts';
import type { Action, PlatformAction, RegistryAction, Status, Tunables } from './release-model.ts';
import type { ReleaseReconcilerOptions } from './release-options.ts';
import { rollWorkloads } from './rollout/roll-workloads.ts';
import type { Look, PlatformLook, RegistryLook } from './sources/source.ts';
import { pushVersion } from './write-back/push-version.ts';

type Effects<L, A extends { kind: string }> = {
  [K in A['kind']]: (look: L, action: Extract<A, { kind: K }>, run: ReleaseRun) => Promise<ReconcileResult>;
};

/** Each source's effects, by action kind. */
export interface ReleaseEffects {
  platform: Effects<PlatformLook, PlatformAction>;
  registry: Effects<RegistryLook, RegistryAction>;
}

export function releaseEffects(options: ReleaseReconcilerOptions, tun: Tunables): ReleaseEffects {
  return {
    platform: {
      start: (look, _, run) => startExport(options, look, run),
      publish: (look, action, run) =>
        action.mode === 'Renew' || action.mode === 'Repair'
          ? freshLink(options, tun, look, action, run)
          : publishContent(options, tun, look, action, run),
      roll: (look, action, run) => rollWorkloads(options, look, action, run),
      writeBack: (look, _, run) => pushVersion(options, look, run),
    },
    registry: {
      pull: (look, action, run) =>
        look.registry
          ? pullImage(options, { ...look, registry: look.registry }, action, run)
          : Promise.reject(misdirected(look, action)),
      rewrite: (look, _, run) => rewriteReference(options, look, run),
      roll: (look, action, run) => rollWorkloads(options, look, action, run),
      writeBack: (look, _, run) => pushVersion(options, look, run),
    },
  };
}

/** Runs `action` by the effect of its look's source. */
export function runAction(
  effects: ReleaseEffects,
  look: Look,
  action: Exclude<Action, { kind: 'none' }>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  if (look.source === 'platform') {
    const { platform: p } = effects;
    switch (action.kind) {
      case 'start':
        return p.start(look, action, run);
      case 'publish':
        return p.publish(look, action, run);
      case 'roll':
        return p.roll(look, action, run);
      case 'writeBack':
        return p.writeBack(look, action, run);
    }
  }
  if (look.source === 'registry') {
    const { registry: r } = effects;
    switch (action.kind) {
      case 'pull':
        return r.pull(look, action, run);
      case 'rewrite':
        return r.rewrite(look, action, run);
      case 'roll':
        return r.roll(look, action, run);
      case 'writeBack':
        return r.writeBack(look, action, run);
    }
  }
  return Promise.reject(misdirected(look, action));
}

/** A decision no effect of its look's source performs: a bug in the rules, recorded as a failure. */
const misdirected = (look: Look, action: Action) =>
  new Error(
    `The ${action.kind} action was decided for a release whose look (${look.source}) cannot perform it`,
  );

export type ReleaseActions = ActionTable<Look, Action, StaticExportRelease, Status>;

/** The skeleton's table: each kind's flags, the effect picked by the look's source. */
export function releaseActions(options: ReleaseReconcilerOptions, tun: Tunables): ReleaseActions {
  const effects = releaseEffects(options, tun);
  const run = (look: Look, action: Exclude<Action, { kind: 'none' }>, r: ReleaseRun) =>
    runAction(effects, look, action, r);
  return {
    start: { run, atMostOnce: true },
    // A finished job's state (and its ExportCompleted event) is stored with what the publish made of
    // it: a crash in between polls the job again, and publishing twice writes the same values.
    publish: { run, writesWithOutcome: true },
    pull: { run },
    rewrite: { run },
    roll: { run },
    writeBack: { run },
  };
}
