// One reconcile's part in its release's share group (shared-exports.ts). Opened by the platform
// source (export/platform-export.ts) when the release has an account, closed when the reconcile
// ends: every call made on the group goes through it. Deciding reads the group's flight; the
// reconciler's claim step, right after, reserves the start decided (with its budget's slot).

import type { AdminApiClient, GeneratedBundle } from '../../../api/index.ts';
import { recordedJobRef } from '../../../api/index.ts';
import type { Reservation } from '../../reconciler-base.ts';
import type { BudgetVisit } from '../budget/budget-visit.ts';
import type { SharedExport, SharedExports } from './shared-exports.ts';

export class ShareVisit {
  private readonly groups: SharedExports;
  /** The release (`namespace/name`). */
  private readonly member: string;
  /** Digest of the API base URL and key (see AdminApiClient.identity). */
  readonly identity: string;
  /** The group's share key (see shareKey). */
  readonly key: string;

  /**
   * The release belongs to the group of `key` from here on (it left any other). `site`: its account
   * and project, for a release of the current export API (one active job per project).
   */
  constructor(groups: SharedExports, member: string, identity: string, key: string, site?: string) {
    this.groups = groups;
    this.member = member;
    this.identity = identity;
    this.key = key;
    groups.enter(member, key, site);
  }

  /** The group's export in flight, if any. */
  flight(): SharedExport | undefined {
    return this.groups.flight(this.key);
  }

  /** A sibling group's export in flight (the project's other base path), and a release of it to name. */
  sibling(): { release: string; flight: SharedExport } | undefined {
    return this.groups.sibling(this.key);
  }

  /** A job a release of the group records (e.g. after a restart) is the group's, unless one is already. */
  adopt(jobId: string, startedAt: string): void {
    this.groups.adopt(this.key, this.identity, jobId, startedAt);
  }

  /**
   * The recorded job's status: another member's answer still fresh, or one read for all. A
   * completed job's answer in the current API carries its link: kept for the publish that follows.
   */
  poll(client: AdminApiClient, job: { jobId: string; projectId?: string }, signal?: AbortSignal) {
    return this.groups.poll(this.identity, job.jobId, async () => {
      const answer = await client.readExport(recordedJobRef(job), signal ? { signal } : {});
      if (answer.link) this.groups.offerLink(this.identity, job.jobId, answer.link);
      return answer.status;
    });
  }

  /** A bundle link generated for another release of the group a moment ago serves this one too. */
  link(jobId: string, call: () => Promise<GeneratedBundle>): Promise<GeneratedBundle> {
    return this.groups.link(this.identity, jobId, call);
  }

  /**
   * This release is about to start the group's export: the others wait for its job id instead of
   * starting one, and its start budget group's slot (a release of the current export API) is
   * reserved. Taken in the same synchronous step as the decision that read the group's flight and
   * the budget, so two releases never both decide to start, nor two take the last slot. Unless the
   * start request is sent, both are given back (the skeleton sees to it).
   */
  reserveStart(now: Date, budget: BudgetVisit | undefined): Reservation {
    this.groups.claim(this.key, this.member, now.toISOString());
    const slot = budget?.reserve(now);
    let held = true;
    return {
      sent: () => {
        if (!held) return;
        held = false;
        slot?.sent();
      },
      release: () => {
        if (!held) return;
        held = false;
        slot?.release();
        this.groups.abandon(this.member, false);
      },
    };
  }

  /** This reconcile polled the job and looks again at `until`: the others reuse its answer till then. */
  pollFreshUntil(jobId: string, until: number): void {
    this.groups.pollFreshUntil(this.identity, jobId, until);
  }

  /** The claimed start returned a job: the others of the group join it. */
  started(jobId: string, startedAt: string): void {
    this.groups.started(this.key, this.member, this.identity, jobId, startedAt);
  }

  /** The claimed start failed: the others of the group try themselves now (the error may be this release's alone). */
  startFailed(): void {
    this.groups.abandon(this.member);
  }

  /**
   * The reconcile ended. A start claimed that was not sent (a slot to wait for, a conflict) or whose
   * job id was not recorded: the group's other releases may start, when they look again.
   */
  close(): void {
    this.groups.abandon(this.member, false);
  }
}
