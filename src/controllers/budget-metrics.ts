// What is left of the platform's limits, read at scrape time: requests per minute per admin key
// (labelled by the client's key id, never the key) and agent job creations per project and hour.
import { Gauge } from 'prom-client';
import type { Metrics } from '../runtime/metrics.ts';
import type { ApiClients } from './credentials.ts';

export function registerBudgetMetrics(metrics: Metrics, clients: ApiClients): void {
  const p = metrics.prefix;
  const registers = [metrics.registry];
  new Gauge({
    name: `${p}admin_api_requests_remaining`,
    help: "Admin API requests the operator's per-minute limit still allows now, per key (key_id: a digest prefix, not the key). 0 means requests wait.",
    labelNames: ['key_id'],
    registers,
    collect() {
      this.reset();
      for (const [keyId, remaining] of clients.requestBudgets()) this.set({ key_id: keyId }, remaining);
    },
  });
  new Gauge({
    name: `${p}agent_job_budget_remaining`,
    help: 'Agent job creations the hourly limit still allows now, per project. 0 means creations wait.',
    labelNames: ['project'],
    registers,
    collect() {
      this.reset();
      for (const project of clients.budget.projects())
        this.set({ project }, clients.budget.availableNow(project));
    },
  });
}
