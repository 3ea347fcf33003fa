// Client-side budget for agent job creation: the contract allows 100 per hour per project and
// answers 429 beyond. Counting locally (sliding window) lets the operator and CLI wait instead of
// hitting the limit. One instance can be shared by every caller working on the same projects.
import { HOUR_MS, inWindow, SlidingWindow } from './sliding-window.ts';

export interface AgentJobBudgetOptions {
  /** Creations allowed per window and project. Default 100. */
  limit?: number;
  /** Window length. Default one hour. */
  windowMs?: number;
  now?: () => number;
}

/** A taken slot; `release` gives it back when the server certainly created nothing. */
export interface BudgetReservation {
  release(): void;
}

export class AgentJobBudget {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly used = new Map<string, SlidingWindow>();
  private readonly blockedUntil = new Map<string, number>();

  constructor(options: AgentJobBudgetOptions = {}) {
    this.limit = options.limit ?? 100;
    this.windowMs = options.windowMs ?? HOUR_MS;
    this.now = options.now ?? Date.now;
  }

  private recent(projectId: string): SlidingWindow {
    let window = this.used.get(projectId);
    if (!window) {
      window = new SlidingWindow(this.windowMs, this.now);
      this.used.set(projectId, window);
    }
    return window;
  }

  /** Milliseconds until a creation is allowed for the project (0: now). */
  delayMs(projectId: string): number {
    const byWindow = this.recent(projectId).delayMs(this.limit);
    const byServer = (this.blockedUntil.get(projectId) ?? 0) - this.now();
    return Math.max(0, byWindow, byServer);
  }

  /** When the next creation is allowed for the project. */
  nextAllowedAt(projectId: string): Date {
    return new Date(this.now() + this.delayMs(projectId));
  }

  remaining(projectId: string): number {
    return Math.max(0, this.limit - this.recent(projectId).count());
  }

  /** Creations the project may still make now: 0 while the server's Retry-After holds too. */
  availableNow(projectId: string): number {
    return this.delayMs(projectId) > 0 ? 0 : this.remaining(projectId);
  }

  /** The projects this budget has counted creations or refusals for. */
  projects(): string[] {
    return [...new Set([...this.used.keys(), ...this.blockedUntil.keys()])];
  }

  /** Takes a slot if one is free now; undefined otherwise (see `delayMs`). */
  tryReserve(projectId: string): BudgetReservation | undefined {
    if (this.delayMs(projectId) > 0) return undefined;
    const window = this.recent(projectId);
    const entry = window.add(this.now(), undefined);
    return { release: () => entry && window.remove(entry) };
  }

  /**
   * Counts creations made before this process started (e.g. from AgentJob statuses), so a
   * restarted operator does not spend the project's hourly limit a second time.
   */
  recordPast(projectId: string, atMs: number): void {
    if (inWindow(atMs, this.now(), this.windowMs)) this.recent(projectId).add(atMs, undefined);
  }

  /** Records that the server itself refused creations (429 with Retry-After) for `ms`. */
  blockFor(projectId: string, ms: number): void {
    const until = this.now() + ms;
    this.blockedUntil.set(projectId, Math.max(until, this.blockedUntil.get(projectId) ?? 0));
  }
}
