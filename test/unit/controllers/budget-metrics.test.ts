// Admin API metrics as the operator wires them (ApiClients' onCall and budgets into one registry),
// driven through the production client against the simulator: calls by route template and code,
// what is left of each limit, and neither the admin key nor a bundle link anywhere in the output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isExportFinished, NotFoundError } from '../../../src/api/index.ts';
import { registerBudgetMetrics } from '../../../src/controllers/budget-metrics.ts';
import { ApiClients } from '../../../src/controllers/credentials.ts';
import { StartBudgets } from '../../../src/controllers/static-export-release/budget/start-budget.ts';
import { createLogger } from '../../../src/log.ts';
import { Metrics } from '../../../src/runtime/metrics.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';

let sim: Simulator;
let clients: ApiClients;
let metrics: Metrics;
const budgets = new StartBudgets();

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 10 });
  metrics = new Metrics({ processMetrics: false });
  clients = new ApiClients({
    logger: createLogger({ level: 'silent' }),
    retry: { attempts: 1 },
    requestsPerMinute: 50,
    onCall: (_operation, status, ms, endpoint) => metrics.observeAdminApiCall(endpoint, status, ms / 1000),
  });
  registerBudgetMetrics(metrics, clients, budgets);
});
afterAll(async () => {
  await clients.close();
  await sim.close();
});

describe('admin API and budget metrics', () => {
  it('count calls by route template and code, report the budgets left, and never carry the key or a link', async () => {
    const client = clients.get({ baseUrl: sim.baseUrl, apiKey: sim.adminKey, secret: 'web/key' });
    const { jobId } = await client.startExport({ domain: 'docs.example.com' });
    let polls = 0;
    for (;;) {
      polls++;
      if (isExportFinished(await client.getExport({ revision: 'contract', jobId }))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const { bundleUrl } = await client.generateBundle(jobId);
    await expect(client.getExport({ revision: 'contract', jobId: 'se_missing' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await client.createAgentJob('proj-a', 'Document the new flag');

    const text = await metrics.text();
    const calls = (endpoint: string, code: number) =>
      `static_export_admin_api_requests_total{endpoint="${endpoint}",code="${code}"}`;
    expect(text).toContain(`${calls('POST /v1/static-export/jobs', 202)} 1`);
    expect(text).toContain(`${calls('GET /v1/static-export/jobs/{jobId}', 200)} ${polls}`);
    expect(text).toContain(`${calls('GET /v1/static-export/jobs/{jobId}', 404)} 1`);
    expect(text).toContain(`${calls('POST /v1/static-export/jobs/{jobId}/bundle', 200)} 1`);
    expect(text).toContain(`${calls('POST /v2/agent/{projectId}/job', 201)} 1`);
    const sent = polls + 4;
    expect(text).toContain(
      `static_export_admin_api_requests_remaining{key_id="${client.keyId}"} ${50 - sent}`,
    );
    expect(text).toContain('static_export_agent_job_budget_remaining{project="proj-a"} 99');

    const link = new URL(bundleUrl);
    for (const secret of [sim.adminKey, bundleUrl, link.search.slice(1), `${link.host}${link.pathname}`]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
    // Ids are not secrets but would make a series per job: route templates only.
    expect(text).not.toContain(jobId);
    expect(client.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(sim.adminKey).not.toContain(client.keyId);
  });
});
