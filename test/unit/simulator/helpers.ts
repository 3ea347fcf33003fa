// Shared by the simulator and client tests: raw HTTP against the simulator and tar inspection.
import { Parser, type ReadEntry } from 'tar';
import type { Simulator } from '../../../src/simulator/index.ts';

export function authHeaders(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
}

export async function call(
  sim: Simulator,
  method: string,
  path: string,
  body?: unknown,
  key = sim.adminKey,
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const init: RequestInit = { method, headers: authHeaders(key) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`${sim.baseUrl}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : {} };
}

/** Starts an export, advances the simulator clock past its duration and generates a bundle link. */
export async function completedExport(
  sim: Simulator,
  domain = 'docs.acme.dev',
): Promise<{ jobId: string; bundleUrl: string; sizeBytes: number; expiresAt: string }> {
  const started = await call(sim, 'POST', '/v1/static-export/jobs', { domain });
  if (started.status !== 202) throw new Error(`start answered ${started.status}`);
  const jobId = String(started.json.jobId);
  for (let i = 0; i < 200; i++) {
    const status = await call(sim, 'GET', `/v1/static-export/jobs/${jobId}`);
    if (status.json.status === 'completed') break;
    if (status.json.status === 'failed') throw new Error(`export failed: ${String(status.json.error)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const bundle = await call(sim, 'POST', `/v1/static-export/jobs/${jobId}/bundle`);
  if (bundle.status !== 200) throw new Error(`bundle answered ${bundle.status}`);
  return bundle.json as { jobId: string; bundleUrl: string; sizeBytes: number; expiresAt: string };
}

export interface TarFile {
  content: Buffer;
  mtime: Date | undefined;
}

export async function untar(archive: Buffer): Promise<Map<string, TarFile>> {
  const files = new Map<string, TarFile>();
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => {
          if (entry.type === 'File')
            files.set(entry.path, { content: Buffer.concat(chunks), mtime: entry.mtime });
        });
      },
    });
    parser.on('end', () => resolve());
    parser.on('error', reject);
    parser.end(archive);
  });
  return files;
}

export async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}
