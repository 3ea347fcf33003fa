// A restarted operator (or a new leader) counts the starts the releases recorded in the last hour
// before any release of the current export API may start: otherwise it would spend the
// organization's hourly budget a second time and meet the platform's 429.
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../crd/index.ts';
import { readCredentials, type SecretReads } from '../credentials.ts';
import type { ReleaseReconcilerOptions } from './options.ts';
import { memberKey } from './shared-exports.ts';
import { budgetGroup } from './start-budget.ts';

type SeedOptions = Pick<ReleaseReconcilerOptions, 'kube' | 'clients' | 'budgets' | 'logger'>;

/** The starts a release recorded: those it made, and one whose outcome it never learnt. */
function recordedStarts(r: StaticExportRelease): string[] {
  const s = r.status ?? {};
  return [...(s.recentStarts ?? []), ...(s.start ? [s.start.since] : [])];
}

export async function seedStartBudgets(
  { kube, clients, budgets, logger }: SeedOptions,
  releases: readonly StaticExportRelease[],
  secrets: SecretReads | undefined,
): Promise<void> {
  for (const r of releases) {
    const starts = recordedStarts(r);
    const spec = staticExportReleaseSpecSchema.safeParse(r.spec);
    if (starts.length === 0 || !spec.success || spec.data.projectId === undefined) continue;
    const release = { ...r, spec: spec.data };
    // A release whose key cannot be read now cannot start either; its group is counted when it can.
    const creds = await readCredentials(kube, release, clients.defaults, secrets).catch(() => undefined);
    if (!creds || 'failure' in creds) continue;
    const group = budgetGroup(spec.data.startBudget?.group, clients.get(creds).keyId);
    for (const at of starts) budgets.recordPast(group, memberKey(r), Date.parse(at));
  }
  logger?.debug({ groups: budgets.names().length }, 'start budgets seeded from recorded starts');
}
