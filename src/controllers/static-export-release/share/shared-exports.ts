// One export per site at a time: releases with the same admin account (API base URL and key,
// compared by digest), domain and export options form a share group. The group has at most one
// export in flight; a release of the group joins it instead of starting its own, and the platform
// answers about a job once for all of them (a status poll, a bundle link). Everything is in memory
// and indexed by key (no scan over releases); after a restart it is rebuilt from the job ids the
// releases keep in status. A project's groups of other base paths are siblings: the platform allows
// one active job per project, so a sibling's export in flight is waited for, not met with a 409.
// Decisions stay in decide-release.ts: this only holds what was observed.

import { createHash } from 'node:crypto';
import type { ExportStatus, GeneratedBundle } from '../../../api/index.ts';
import { bundleOptionsOf, NotFoundError } from '../../../api/index.ts';
import type { StaticExportRelease, StaticExportReleaseSpec } from '../../../crd/index.ts';
import { exportTarget } from '../export/export-site.ts';

/** The group's export as `decide` sees it. `jobId` is absent while its start call is under way. */
export interface SharedExport {
  jobId?: string;
  startedAt: string;
  state?: string;
}

interface Group {
  members: Set<string>;
  /** The project (with the account) whose other base paths are its siblings, if it is of the current export API. */
  site: string | undefined;
  /**
   * `by`: the release starting it (until it has a job id); `jk`: its key in `flights`. Set to
   * undefined, never deleted: a delete turns V8's object into a hash table (a group per release).
   */
  flight: (SharedExport & { by?: string; jk?: string }) | undefined;
}

interface PollEntry {
  at: number;
  /** Reused until then: the poller's next poll (final answers are kept until they expire). */
  freshUntil: number;
  result: { kind: 'job'; job: ExportStatus } | { kind: 'notFound' };
}

interface LinkEntry {
  issuedAt: number;
  bundle: GeneratedBundle;
}

/**
 * The group of a release: account (client identity digest), and its site with the options that
 * make its bundle: domain and export options, or project and base path.
 */
export function shareKey(
  identity: string,
  spec: Pick<StaticExportReleaseSpec, 'domain' | 'export' | 'projectId' | 'basePath'>,
): string {
  return createHash('sha256')
    .update(JSON.stringify([identity, ...bundleOptionsOf(exportTarget(spec))]))
    .digest('hex');
}

/** A release as a member of its group: `namespace/name`. */
export const memberKey = (r: Pick<StaticExportRelease, 'metadata'>) =>
  `${r.metadata.namespace}/${r.metadata.name}`;

/** Job ids are per account: another key's job of the same id is never answered from here. */
const jobKey = (identity: string, jobId: string) => `${identity}\u0000${jobId}`;

/** A poll result stays fresh this long when nobody said when the next poll is due. */
const DEFAULT_FRESH_MS = 1_000;
/** A final answer (completed, failed, gone) is kept this long for the members still to see it. */
const FINAL_KEEP_MS = 10 * 60_000;
/** A link is handed to another release only while this share of its lifetime is still ahead. */
const LINK_REUSE_SHARE = 0.1;
const SWEEP_EVERY = 256;

/** A link may go to another release while most of its lifetime is still ahead. */
function reusable(link: LinkEntry, now: number): boolean {
  return now - link.issuedAt <= (link.bundle.expiresAt.getTime() - link.issuedAt) * LINK_REUSE_SHARE;
}

interface SharedExportsOptions {
  /** Wakes a release (`namespace/name`) whose group's export started, ended, or whose start was abandoned. */
  wake?: (release: string) => void;
  now?: () => number;
}

export class SharedExports {
  private readonly groups = new Map<string, Group>();
  private readonly groupOf = new Map<string, string>();
  /** jobKey -> share key of the group whose flight it is. */
  private readonly flights = new Map<string, string>();
  private readonly polls = new Map<string, PollEntry>();
  private readonly links = new Map<string, LinkEntry>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** Site (account and project) -> the share keys of its groups: one project's base paths, one active job. */
  private readonly sites = new Map<string, Set<string>>();
  private readonly wake: (release: string) => void;
  private readonly now: () => number;
  private writes = 0;

  constructor(options: SharedExportsOptions = {}) {
    this.wake = options.wake ?? (() => {});
    this.now = options.now ?? Date.now;
  }

  /**
   * The release belongs to this group now (it left any other). `site`: the account and project of a
   * release of the current export API, whose groups of other base paths are its siblings.
   */
  enter(release: string, key: string, site?: string): void {
    const previous = this.groupOf.get(release);
    if (previous === key) return;
    if (previous !== undefined) this.leave(release);
    this.groupOf.set(release, key);
    let group = this.groups.get(key);
    if (!group) {
      group = { members: new Set(), site, flight: undefined };
      this.groups.set(key, group);
      if (site !== undefined) {
        const keys = this.sites.get(site) ?? new Set();
        keys.add(key);
        this.sites.set(site, keys);
      }
    }
    group.members.add(release);
  }

  /**
   * The export in flight of a sibling group (the same project and account, another base path): the
   * platform allows one active job per project, so this group's start would only meet its 409.
   * `release`: a release of that group (the one starting it, else its first member), to name it.
   */
  sibling(key: string): { release: string; flight: SharedExport } | undefined {
    const site = this.groups.get(key)?.site;
    for (const k of site === undefined ? [] : (this.sites.get(site) ?? [])) {
      const group = k === key ? undefined : this.groups.get(k);
      const f = group?.flight;
      const named = f?.by ?? group?.members.values().next().value;
      if (f && named !== undefined) return { release: named, flight: this.flight(k) as SharedExport };
    }
    return undefined;
  }

  /** Deleted, suspended, or without usable credentials: in no group. */
  leave(release: string): void {
    this.abandon(release);
    const key = this.groupOf.get(release);
    if (key === undefined) return;
    this.groupOf.delete(release);
    const group = this.groups.get(key);
    if (!group) return;
    group.members.delete(release);
    if (group.members.size > 0) return;
    // Nobody left to finish it here: forgotten (a release of the group that comes back adopts it).
    if (group.flight?.jk) this.flights.delete(group.flight.jk);
    this.drop(key, group);
  }

  private drop(key: string, group: Group): void {
    this.groups.delete(key);
    const keys = group.site === undefined ? undefined : this.sites.get(group.site);
    keys?.delete(key);
    if (group.site !== undefined && keys?.size === 0) this.sites.delete(group.site);
  }

  /** The group's export in flight, if any. */
  flight(key: string): SharedExport | undefined {
    const f = this.groups.get(key)?.flight;
    if (!f) return undefined;
    return {
      startedAt: f.startedAt,
      ...(f.jobId ? { jobId: f.jobId } : {}),
      ...(f.state ? { state: f.state } : {}),
    };
  }

  /** A member's status names a job in flight (e.g. after a restart): it is the group's, unless one is already. */
  adopt(key: string, identity: string, jobId: string, startedAt: string): void {
    const group = this.groups.get(key);
    if (!group || group.flight || this.isFinal(this.polls.get(jobKey(identity, jobId)))) return;
    const jk = jobKey(identity, jobId);
    group.flight = { jobId, startedAt, jk };
    this.flights.set(jk, key);
  }

  /** `release` is about to start the group's export: the others wait for its job id instead of starting. */
  claim(key: string, release: string, startedAt: string): void {
    const group = this.groups.get(key);
    if (!group || group.flight) return;
    group.flight = { startedAt, by: release };
  }

  /** The claimed start returned a job: the others join it. */
  started(key: string, release: string, identity: string, jobId: string, startedAt: string): void {
    const group = this.groups.get(key);
    if (!group) return;
    const jk = jobKey(identity, jobId);
    group.flight = { jobId, startedAt, state: 'queued', jk };
    this.flights.set(jk, key);
    this.wakeOthers(group, release);
  }

  /**
   * A claim whose start did not return a job: the others may start. `wake` them when the start
   * failed; not when it only waits for a request slot (they would claim, wait and wake in turn,
   * round and round, until the slot is free: they look again on their own).
   */
  abandon(release: string, wake = true): void {
    const key = this.groupOf.get(release);
    const group = key === undefined ? undefined : this.groups.get(key);
    if (!group?.flight || group.flight.by !== release || group.flight.jobId !== undefined) return;
    group.flight = undefined;
    if (wake) this.wakeOthers(group, release);
  }

  /**
   * The job's status, from the platform or from a poll another member made that is still fresh;
   * concurrent asks share one call. A 404 is an answer too (the job is gone).
   */
  async poll(
    identity: string,
    jobId: string,
    call: () => Promise<ExportStatus>,
  ): Promise<{ kind: 'job'; job: ExportStatus; polled: boolean } | { kind: 'notFound'; polled: boolean }> {
    const key = jobKey(identity, jobId);
    const cached = this.polls.get(key);
    if (cached && this.now() < cached.freshUntil) {
      this.observed(key, jobId, cached);
      return { ...cached.result, polled: false };
    }
    const running = this.inflight.get(`poll\u0000${key}`) as Promise<PollEntry['result']> | undefined;
    if (running) return { ...(await running), polled: false };
    const p = (async (): Promise<PollEntry['result']> => {
      try {
        return { kind: 'job', job: await call() };
      } catch (e) {
        if (e instanceof NotFoundError) return { kind: 'notFound' };
        throw e;
      }
    })();
    this.inflight.set(`poll\u0000${key}`, p);
    try {
      const result = await p;
      const at = this.now();
      const entry: PollEntry = { at, freshUntil: at + DEFAULT_FRESH_MS, result };
      if (this.isFinal(entry)) entry.freshUntil = at + FINAL_KEEP_MS;
      this.remember(this.polls, key, entry);
      this.observed(key, jobId, entry);
      return { ...result, polled: true };
    } finally {
      this.inflight.delete(`poll\u0000${key}`);
    }
  }

  private isFinal(entry: PollEntry | undefined): boolean {
    if (!entry) return false;
    const r = entry.result;
    return r.kind === 'notFound' || r.job.status === 'completed' || r.job.status === 'failed';
  }

  /** Updates the group whose flight the job is: its state, or its end. */
  private observed(key: string, jobId: string, entry: PollEntry): void {
    const group = this.flightGroup(key);
    if (group?.flight?.jobId !== jobId) return;
    if (this.isFinal(entry)) this.land(key, group);
    else if (entry.result.kind === 'job') group.flight.state = entry.result.job.status;
  }

  private flightGroup(jk: string): Group | undefined {
    const key = this.flights.get(jk);
    return key === undefined ? undefined : this.groups.get(key);
  }

  /** The poller decided when it polls next: until then the others reuse its answer. */
  pollFreshUntil(identity: string, jobId: string, until: number): void {
    const entry = this.polls.get(jobKey(identity, jobId));
    if (entry && until > entry.freshUntil) entry.freshUntil = until;
  }

  /**
   * A bundle link for the job: a fresh one, or one generated for another release of the same
   * account very recently (most of its lifetime still ahead); concurrent asks share one call.
   */
  async link(
    identity: string,
    jobId: string,
    call: () => Promise<GeneratedBundle>,
  ): Promise<GeneratedBundle> {
    const key = jobKey(identity, jobId);
    const cached = this.links.get(key);
    const now = this.now();
    if (cached && reusable(cached, now)) return cached.bundle;
    const running = this.inflight.get(`link\u0000${key}`) as Promise<GeneratedBundle> | undefined;
    if (running) return running;
    const p = call();
    this.inflight.set(`link\u0000${key}`, p);
    try {
      const bundle = await p;
      this.remember(this.links, key, { issuedAt: now, bundle });
      return bundle;
    } finally {
      this.inflight.delete(`link\u0000${key}`);
    }
  }

  /** A link the job's own answer carried (the current revision's completed GET): handed out as generated. */
  offerLink(identity: string, jobId: string, bundle: GeneratedBundle): void {
    this.remember(this.links, jobKey(identity, jobId), { issuedAt: this.now(), bundle });
  }

  /** How many poll answers and links are kept. */
  kept(): { polls: number; links: number } {
    return { polls: this.polls.size, links: this.links.size };
  }

  /** The group's export ended (completed, failed or gone): the next one is started anew; members look now. */
  private land(jk: string, group: Group): void {
    const key = this.flights.get(jk);
    group.flight = undefined;
    this.flights.delete(jk);
    this.wakeOthers(group, undefined);
    // The project's other base paths waited for this job: their turn now.
    for (const k of group.site === undefined ? [] : (this.sites.get(group.site) ?? [])) {
      const sibling = k === key ? undefined : this.groups.get(k);
      if (sibling) this.wakeOthers(sibling, undefined);
    }
    if (key !== undefined && group.members.size === 0) this.drop(key, group);
  }

  private wakeOthers(group: Group, except: string | undefined): void {
    for (const m of group.members) if (m !== except) this.wake(m);
  }

  /**
   * Adds an entry; now and then drops the ones no longer handed out (polls no longer fresh, links
   * past their reuse share), so the maps stay as small as what is in use.
   */
  private remember<E>(map: Map<string, E>, key: string, entry: E): void {
    map.set(key, entry);
    if (++this.writes % SWEEP_EVERY !== 0) return;
    const now = this.now();
    for (const [k, p] of this.polls) if (now >= p.freshUntil) this.polls.delete(k);
    for (const [k, l] of this.links) if (!reusable(l, now)) this.links.delete(k);
  }
}
