// Drives the simulator's export endpoints over raw HTTP so bundle tests do not depend on the API client.
import type { Simulator } from '../../../src/simulator/index.ts';

export interface ExportedBundle {
  jobId: string;
  bundleUrl: string;
  sizeBytes: number;
  expiresAt: string;
}

async function call(
  sim: Simulator,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${sim.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${sim.adminKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Starts an export, waits for completion and generates a bundle link (call `generateLink` for fresh ones). */
export async function exportBundle(sim: Simulator, domain = 'docs.example.com'): Promise<ExportedBundle> {
  const { jobId } = (await call(sim, 'POST', '/v1/static-export/jobs', { domain })) as { jobId: string };
  for (;;) {
    const status = await call(sim, 'GET', `/v1/static-export/jobs/${jobId}`);
    if (status.status === 'completed') break;
    if (status.status === 'failed') throw new Error(`export failed: ${String(status.error)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return generateLink(sim, jobId);
}

export async function generateLink(sim: Simulator, jobId: string): Promise<ExportedBundle> {
  return (await call(sim, 'POST', `/v1/static-export/jobs/${jobId}/bundle`)) as unknown as ExportedBundle;
}
