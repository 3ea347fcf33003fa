// What is left of the platform's limits, read at scrape time: requests per minute per admin key
// (labelled by the client's key id, never the key), agent job creations per project and hour, and
// export starts per start budget group and hour (the current export API).
import { Gauge } from 'prom-client';
import type { Metrics } from '../runtime/metrics.ts';
import type { ApiClients } from './credentials.ts';
import type { StartBudgets } from './static-export-release/budget/start-budget.ts';

export function registerBudgetMetrics(metrics: Metrics, clients: ApiClients, budgets: StartBudgets): void {
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
  const perGroup = (name: string, help: string, value: (group: string) => number) =>
    new Gauge({
      name: `${p}${name}`,
      help,
      labelNames: ['group'],
      registers,
      collect() {
        this.reset();
        for (const group of budgets.names()) this.set({ group }, value(group));
      },
    });
  perGroup(
    'start_budget_remaining',
    "Export starts the hourly budget of the current export API still allows now, per group (spec.startBudget.group, or key-<key id>), of the group's share of the organization's hour (spec.startBudget.startsPerHour, --start-budget-per-hour). 0 while the platform's 429 holds the group.",
    (g) => budgets.remaining(g),
  );
  perGroup(
    'start_budget_waiting',
    "Releases waiting for a slot in their group's hourly export start budget.",
    (g) => budgets.waiting(g),
  );
  perGroup(
    'start_budget_overdue',
    'Releases that have waited for a start slot longer than their spec.interval: the group needs longer intervals or fewer sites per organization.',
    (g) => budgets.overdue(g),
  );
}
