// One reconcile's view of and claims on its release's start budget group (start-budget.ts): opened by
// the platform source, read by the decision, claimed right after it, told the start's answer.
import type { Reservation } from '../../reconciler-base.ts';
import type { BudgetView, GroupRef, Member, StartAsk, StartBudgets } from './start-budget.ts';

/**
 * One reconcile's part in its release's start budget group (a release of the current export API):
 * the decision reads its view; the claim step right after reserves the slot of the start decided
 * (see Reservation) or queues the wait; the start action tells what the platform answered.
 */
export class BudgetVisit {
  private readonly budgets: StartBudgets;
  private readonly member: string;
  private readonly project: string | undefined;
  readonly group: string;

  constructor(budgets: StartBudgets, member: string, group: GroupRef, m: Member) {
    this.budgets = budgets;
    this.member = member;
    this.group = group.name;
    this.project = m.project;
    budgets.declare(member, group.name, m, group.byKey);
  }

  view(): BudgetView {
    return this.budgets.view(this.group, this.member);
  }

  /** The start decided (at `now`, the time its status records) reserves its slot. */
  reserve(now: Date): Reservation {
    return this.budgets.take(this.group, this.member, now.getTime());
  }

  /** The release waits for its slot in the queue. */
  wait(ask: StartAsk): void {
    this.budgets.wait(this.group, this.member, ask);
  }

  /** It decided neither to start nor to wait for a slot. */
  forget(): void {
    this.budgets.forget(this.group, this.member);
  }

  announced(): void {
    this.budgets.announced(this.group);
  }

  /**
   * The platform refused the start (429): the group waits; when it may start again (ms). The
   * refused start stays counted: the platform may count it too (VENDOR-FACTS).
   */
  refused(retryAfterMs: number | undefined): number {
    return this.budgets.refused(this.group, retryAfterMs);
  }

  /** The platform answered 409 for the project: its releases of the group ask again at `until`, not before. */
  busy(until: number): void {
    if (this.project !== undefined) this.budgets.busy(this.group, this.project, until);
  }
}
