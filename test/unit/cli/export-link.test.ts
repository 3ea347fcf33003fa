// What `export` does with the bundle link the platform hands out: one that is already dead is never
// written (the operator's rule), and one that leads somewhere other than a public address or the
// admin API's own host is refused before any connection, unless --allow-private-bundle-links.
// Through the real CLI against the simulator; every address involved is loopback.
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { runCli } from '../../support/tools/run-cli.ts';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cli-export-link-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const downloads = (sim: Simulator) => sim.requests.filter((r) => r.path.startsWith('/bundles/'));

describe('static-export export and the bundle link', () => {
  it('refuses a link that had expired (in 2001) when it arrived, writing nothing and downloading nothing, exit 5', async () => {
    // A platform whose clock stands in 2001 hands out links that expire then. (One dated before
    // 2000, such as 1970, the client refuses as an invalid answer, exit 9.)
    const sim = await startSimulator({
      apiRevision: 2,
      exportDurationMs: 0,
      clock: () => Date.UTC(2001, 0, 1),
    });
    try {
      const values = join(work, 'expired-values.yaml');
      const result = await runCli(
        ['export', '--project-id', 'acme', '--values-out', values, '--poll-interval', '100ms'],
        { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey },
      );
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toMatch(
        /the platform handed out a bundle link for export [0-9a-f]+ that expires at 2001-01-01T00:1\d:\d\d\.000Z, already expired .*nothing was written/,
      );
      expect(await exists(values)).toBe(false);
      expect(result.stdout).toBe('');
      expect(downloads(sim)).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it("refuses a link to a loopback address other than the admin API's host before connecting; the opt-in allows it", async () => {
    const sim = await startSimulator({ apiRevision: 2, exportDurationMs: 0 });
    try {
      // The API named as localhost: the links the simulator hands out lead to 127.0.0.1, another host.
      const api = {
        STATIC_EXPORT_API_URL: `http://localhost:${new URL(sim.baseUrl).port}`,
        STATIC_EXPORT_API_KEY: sim.adminKey,
      };
      const values = join(work, 'private-values.yaml');
      const args = ['export', '--project-id', 'acme', '--values-out', values, '--poll-interval', '100ms'];
      const refused = await runCli(args, api);
      expect(refused.code, refused.stderr).toBe(5);
      expect(refused.stderr).toContain(
        'leads to 127.0.0.1, an address that is not public (loopback, private, link-local or reserved): not connected to. A private mirror is allowed with --allow-private-bundle-links',
      );
      expect(refused.stderr).not.toMatch(/[?&;]sig=/);
      expect(downloads(sim)).toEqual([]);
      expect(await exists(values)).toBe(false);

      const allowed = await runCli([...args, '--allow-private-bundle-links'], api);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(downloads(sim).length).toBeGreaterThan(0);
      expect(await exists(values)).toBe(true);

      // The admin API's own host needs no opt-in (every other CLI test downloads that way).
      const same = await runCli(args, { ...api, STATIC_EXPORT_API_URL: sim.baseUrl });
      expect(same.code, same.stderr).toBe(0);

      // mirror sync's downloads keep to the same policy.
      const config = join(work, 'mirror.yaml');
      await writeFile(config, 'target: oci://127.0.0.1:1/docs\ndomains:\n  - projectId: mirrored\n');
      const before = downloads(sim).length;
      const synced = await runCli(
        ['mirror', 'sync', '--config', config, '--starts-file', join(work, 'starts.json')],
        api,
      );
      expect(synced.code, synced.stderr).toBe(5);
      expect(synced.stderr).toContain('project mirrored: failed: the bundle link');
      expect(synced.stderr).toContain('leads to 127.0.0.1, an address that is not public');
      expect(downloads(sim).length).toBe(before);
    } finally {
      await sim.close();
    }
  });
});
