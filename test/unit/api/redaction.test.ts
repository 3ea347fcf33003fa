// The admin key and presigned bundle URLs must never reach error messages or log lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminApiClient, AdminApiError } from '../../../src/api/index.ts';
import { createLogger } from '../../../src/log.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { json, stubServer } from './stub.ts';

const lines: string[] = [];
const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 20, logger });
});
afterAll(() => sim.close());

function assertClean(text: string, secrets: string[]): void {
  for (const secret of secrets) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/[?&]sig=/);
}

describe('secrets stay out of errors and logs', () => {
  it('through a whole export, every error kind and error logging', async () => {
    const client = new AdminApiClient({
      baseUrl: sim.baseUrl,
      apiKey: sim.adminKey,
      logger,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 1500 },
      timeouts: { requestMs: 300 },
    });
    const messages: string[] = [];
    const record = async (p: Promise<unknown>) => {
      try {
        return await p;
      } catch (err) {
        expect(err).toBeInstanceOf(AdminApiError);
        messages.push(String(err), (err as Error).stack ?? '');
        logger.error({ err }, 'operation failed');
        return undefined;
      }
    };

    const { jobId } = await client.startExport({ domain: 'docs.acme.dev' });
    await new Promise((r) => setTimeout(r, 60));
    await client.getExport({ revision: 'contract', jobId });
    const bundle = await client.generateBundle(jobId);
    logger.info({ bundleUrl: bundle.bundleUrl }, 'bundle ready');
    logger.info(`fetching ${bundle.bundleUrl}`);

    for (const fault of [
      'bundle:500:1',
      'bundle:429:1',
      'status:reset:1',
      'status:malformed:1',
      'status:delay=600:1',
    ]) {
      sim.configure({ faults: [fault] });
      await record(
        fault.startsWith('bundle')
          ? client.generateBundle(jobId)
          : client.getExport({ revision: 'contract', jobId }),
      );
    }
    sim.configure({ faults: [] });
    await record(client.getExport({ revision: 'contract', jobId: 'se_unknown' }));
    await record(client.createAgentJob('p', ''));
    const wrongKey = 'mint_wrongkey_abcdef123456';
    await record(
      new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: wrongKey, logger }).getExport({
        revision: 'contract',
        jobId,
      }),
    );

    expect(messages.length).toBeGreaterThanOrEqual(16);
    const secrets = [sim.adminKey, wrongKey, bundle.bundleUrl, new URL(bundle.bundleUrl).search];
    for (const m of messages) assertClean(m, secrets);
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) assertClean(line, secrets);
    // The log does say what happened, just without the secrets.
    expect(lines.join('\n')).toContain('admin API call failed; retrying');
    await client.close();
  });

  it('scrubs secrets a server echoes back in its error text', async () => {
    const key = 'mint_echoedsecret_987654321';
    const stub = await stubServer((req, res) => {
      json(res, req.method === 'GET' ? 401 : 500, {
        error: `bad token ${req.headers.authorization}; see https://s3.example/b.tar.gz?X-Amz-Signature=abc123`,
      });
    });
    const client = new AdminApiClient({ baseUrl: stub.baseUrl, apiKey: key, logger, retry: { attempts: 1 } });
    try {
      const errors = await Promise.all([
        client.getExport({ revision: 'contract', jobId: 'se_1' }).catch((e: Error) => e),
        client.startExport({ domain: 'd.example' }).catch((e: Error) => e),
      ]);
      for (const err of errors) {
        expect(err).toBeInstanceOf(AdminApiError);
        assertClean(`${String(err)} ${(err as AdminApiError).serverMessage}`, [
          key,
          'X-Amz-Signature=abc123',
        ]);
        expect((err as Error).message).toContain('bad token');
      }
    } finally {
      await client.close();
      await stub.close();
    }
  });

  it('does not keep the key on enumerable properties of the client', () => {
    const key = 'mint_enumerablecheck_1234';
    const client = new AdminApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: key });
    expect(JSON.stringify(Object.entries(client))).not.toContain(key);
    void client.close();
  });

  it('the simulator request log holds neither headers nor query strings', () => {
    for (const r of sim.requests) {
      assertClean(JSON.stringify(r), [sim.adminKey]);
    }
  });
});
