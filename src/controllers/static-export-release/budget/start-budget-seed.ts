// A restarted operator (or a new leader) counts what the releases recorded before any release of the
// current export API may start: their starts of the last hour (refused ones too) and a 429's hold.
// Otherwise it would spend the organization's hourly budget a second time, or ask again during the
// hold, and meet the platform's 429.
import { revisionOfSpec } from '../../../api/index.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../../crd/index.ts';
import type { SecretReads } from '../../../secrets/read-secret.ts';
import { readCredentials } from '../../credentials.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { memberKey } from '../share/shared-exports.ts';
import { budgetGroup, recordedStarts } from './recorded-starts.ts';
import type { StartBudgets } from './start-budget.ts';

type SeedOptions = Pick<ReleaseReconcilerOptions, 'kube' | 'clients' | 'budgets' | 'logger'>;

/** What one release recorded, counted in its group (the group its key or spec names now). */
export function seedFrom(budgets: StartBudgets, group: string, r: StaticExportRelease): void {
  for (const at of recordedStarts(r)) budgets.recordPast(group, memberKey(r), at);
  const refused = r.status?.waiting?.refusedUntil;
  if (refused !== undefined) budgets.hold(group, Date.parse(refused));
}

export async function seedStartBudgets(
  { kube, clients, budgets, logger }: SeedOptions,
  releases: readonly StaticExportRelease[],
  secrets: SecretReads | undefined,
): Promise<void> {
  for (const r of releases) {
    const spec = staticExportReleaseSpecSchema.safeParse(r.spec);
    const recorded = recordedStarts(r).length > 0 || r.status?.waiting?.refusedUntil !== undefined;
    if (!recorded || !spec.success || revisionOfSpec(spec.data).startLimit === undefined) continue;
    const release = { ...r, spec: spec.data };
    // A release whose key cannot be read now cannot start either; its group is counted when it can.
    const creds = await readCredentials(kube, release, clients.defaults, secrets).catch(() => undefined);
    if (!creds || 'failure' in creds) continue;
    seedFrom(budgets, budgetGroup(spec.data.startBudget?.group, clients.get(creds).keyId).name, release);
  }
  logger?.debug({ groups: budgets.names().length }, 'start budgets seeded from recorded starts');
}
