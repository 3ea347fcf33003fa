// Agent jobs (contract 4.1, VENDOR-FACTS for get, message and archive): a job is active for a
// while, then completed with a pull request link, or failed when its prompt mentions "fail"; a
// follow-up message makes it active again; creations are limited per project per hour.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { CreateAgentJobRequestSchema } from '../api/schemas.ts';
import { HOUR_MS, type SlidingWindow } from '../api/sliding-window.ts';
import { countInWindow, HttpError, parseBody, type Reply, readJson } from './http.ts';

export type AgentRoute =
  | { endpoint: 'agent-create'; projectId: string }
  | { endpoint: 'agent-get' | 'agent-message' | 'agent-archive'; projectId: string; id: string };

export interface AgentSettings {
  /** Time an agent job stays active. Default 2000. */
  agentJobDurationMs: number;
}

interface AgentJob {
  id: string;
  projectId: string;
  createdAt: number;
  activeSince: number;
  archivedAt?: number;
  fails: boolean;
  prNumber: number;
}

export class AgentJobs {
  private readonly jobs = new Map<string, AgentJob>();
  private readonly creations = new Map<string, SlidingWindow>();
  private prCounter = 0;
  private readonly now: () => number;
  private readonly settings: Readonly<AgentSettings>;
  private readonly rateLimitPerHour: number;

  /** `settings` is read on each request, so a change applies from then on. */
  constructor(now: () => number, settings: Readonly<AgentSettings>, rateLimitPerHour: number) {
    this.now = now;
    this.settings = settings;
    this.rateLimitPerHour = rateLimitPerHour;
  }

  count(projectId?: string): number {
    if (projectId === undefined) return this.jobs.size;
    return [...this.jobs.values()].filter((j) => j.projectId === projectId).length;
  }

  async handle(route: AgentRoute, req: IncomingMessage): Promise<Reply> {
    switch (route.endpoint) {
      case 'agent-create': {
        const { prompt } = parseBody(CreateAgentJobRequestSchema, await readJson(req));
        countInWindow(
          this.creations,
          route.projectId,
          this.now,
          HOUR_MS,
          this.rateLimitPerHour,
          'Too many sessions created. Please try again later.',
        );
        const job: AgentJob = {
          id: `job_${randomBytes(12).toString('hex')}`,
          projectId: route.projectId,
          createdAt: this.now(),
          activeSince: this.now(),
          fails: /fail/i.test(prompt),
          prNumber: ++this.prCounter,
        };
        this.jobs.set(job.id, job);
        return { status: 201, body: this.view(job) };
      }
      case 'agent-get':
        return { status: 200, body: this.view(this.job(route.projectId, route.id)) };
      case 'agent-message': {
        const { prompt } = parseBody(CreateAgentJobRequestSchema, await readJson(req));
        const job = this.job(route.projectId, route.id);
        if (job.archivedAt !== undefined)
          throw new HttpError(409, 'Agent job is archived; create a new job instead');
        job.activeSince = this.now();
        job.fails = /fail/i.test(prompt);
        return { status: 200, body: this.view(job) };
      }
      case 'agent-archive': {
        const job = this.job(route.projectId, route.id);
        job.archivedAt ??= this.now();
        return { status: 200, body: this.view(job) };
      }
    }
  }

  private job(projectId: string, id: string): AgentJob {
    const job = this.jobs.get(id);
    if (!job || job.projectId !== projectId) throw new HttpError(404, `Agent job ${id} not found`);
    return job;
  }

  private view(job: AgentJob): Record<string, unknown> {
    const doneAt = job.activeSince + this.settings.agentJobDurationMs;
    const now = this.now();
    const finished = (job.archivedAt ?? now) >= doneAt;
    const status =
      job.archivedAt !== undefined ? 'archived' : !finished ? 'active' : job.fails ? 'failed' : 'completed';
    const prLink =
      finished && !job.fails ? `https://github.com/acme/${job.projectId}-docs/pull/${job.prNumber}` : null;
    return {
      id: job.id,
      status,
      source: { repository: `https://github.com/acme/${job.projectId}-docs`, ref: 'main' },
      model: 'sim-agent-1',
      prLink,
      createdAt: new Date(job.createdAt).toISOString(),
      archivedAt: job.archivedAt === undefined ? null : new Date(job.archivedAt).toISOString(),
    };
  }
}
