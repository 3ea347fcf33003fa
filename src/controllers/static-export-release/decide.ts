// What a StaticExportRelease needs next, as a pure function of what was observed: the first rule of
// its source's ladder that applies, else `settle`. The release's source (sources/) observes, calls
// `decide`, performs the one action it names and folds the outcome back into status (after-*.ts).

import {
  DEFAULT_TUNABLES,
  type Decision,
  first,
  type Observed,
  type PlatformCase,
  type PlatformObserved,
  type RegistryObserved,
  type Tunables,
} from './model.ts';
import { untilNextCheck, withCheck } from './oci.ts';
import { blocked } from './rules/blocked.ts';
import { deleting } from './rules/deleting.ts';
import { exportInFlight } from './rules/export-in-flight.ts';
import { joinOrStart } from './rules/join-or-start.ts';
import { ociCheckFailed } from './rules/oci-check-failed.ts';
import { ociNewDigest } from './rules/oci-new-digest.ts';
import { ociRewrite } from './rules/oci-rewrite.ts';
import { pinnedVersion } from './rules/pinned-version.ts';
import { renewLink } from './rules/renew-link.ts';
import { repairTarget } from './rules/repair-target.ts';
import { startOutcomeUnknown, withoutExpiredStart } from './rules/start-outcome-unknown.ts';
import { suspended } from './rules/suspended.ts';
import { untilNextWork } from './schedule.ts';
import { settle } from './settle.ts';
import { requestsOf } from './start-reason.ts';

export function decide(o: Observed, tun: Tunables = DEFAULT_TUNABLES): Decision {
  return (
    first([deleting, suspended])(o) ?? (o.source === 'registry' ? decideRegistry(o) : decidePlatform(o, tun))
  );
}

// A start in doubt is waited out before anything else; a problem found before the calls, then an
// export in flight, come before a pin or a new export; renewal and repair only once none is due.
function decidePlatform(o: PlatformObserved, tun: Tunables): Decision {
  const c = { o, tun, status: withoutExpiredStart(o.release.status ?? {}, o.now, tun) };
  return (
    first([startOutcomeUnknown, blocked, exportInFlight, pinnedVersion, joinOrStart])(c) ?? steady(pinSeen(c))
  );
}

/** Nothing to export: the link is renewed, the target repaired, or the release settles. */
function steady(c: PlatformCase): Decision {
  const { o, status, tun } = c;
  // A pinned release handles a request without exporting: its link is renewed as usual.
  const handled = o.release.spec.pinnedVersion ? { ...status, ...requestsOf(o.release) } : status;
  return first([renewLink, repairTarget])(c) ?? settle(o, handled, untilNextWork(o.release, o.now, tun));
}

/**
 * A pinned release does not re-export on spec changes: its generation is seen, and what else is
 * due (renewal, the workloads of a changed spec.rollout) follows.
 */
function pinSeen(c: PlatformCase): PlatformCase {
  const { release } = c.o;
  const gen = release.metadata.generation;
  if (!release.spec.pinnedVersion || (c.status.observedGeneration ?? 0) === (gen ?? 0)) return c;
  return { ...c, status: { ...c.status, observedGeneration: gen } };
}

// The tag's check is recorded first (the spec and any request are seen with it); a new digest is
// pulled before a drifted target is written again.
function decideRegistry(o: RegistryObserved): Decision {
  const found = o.release.status ?? {};
  const status = o.check?.kind === 'resolved' ? withCheck(found, o.release, o.check.digest, o.now) : found;
  const c = { o, status };
  return (
    first([blocked, ociCheckFailed, ociNewDigest, ociRewrite])(c) ??
    settle(o, status, untilNextCheck(status, o.oci, o.now))
  );
}
