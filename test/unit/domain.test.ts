// One bare-host rule for the CLI (--domain), the StaticExportRelease CRD (spec.domain), the mirror
// and the simulator's start endpoint.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleError, mirrorBundle } from '../../src/bundle/index.ts';
import { checkDomain } from '../../src/cli/options.ts';
import { staticExportReleaseSpecSchema } from '../../src/crd/static-export-release.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { call } from './simulator/helpers.ts';

const label63 = 'a'.repeat(63);
const good = [
  'docs.example.com',
  'a-b.example.co',
  'xn--bcher-kva.example',
  `${label63}.example.com`,
  '1docs.example.io',
];
const bad = [
  'localhost',
  'docs',
  '127.0.0.1',
  '10.0.0.1',
  '::1',
  '[::1]',
  `${'a'.repeat(64)}.example.com`,
  `${`${label63}.`.repeat(4)}com`, // 260 characters
  'https://docs.example.com',
  'docs.example.com/',
  'docs.example.com/docs',
  'docs.example.com:443',
  'docs.example.com.',
  '-docs.example.com',
  'docs..example.com',
  '../escape',
  '',
];

const spec = (domain: string) => ({
  domain,
  credentialsSecretRef: { name: 'k' },
  target: { valuesSecret: { name: 'v' } },
});

async function mirrorRefuses(domain: string): Promise<boolean> {
  // A good domain gets as far as reading the (missing) archive; a bad one is refused before.
  const dir = await mkdtemp(join(tmpdir(), 'domain-test-'));
  const error = await mirrorBundle({ url: 'file:///nonexistent/bundle.tar.gz', dir, domain })
    .catch((e: unknown) => e)
    .finally(() => rm(dir, { recursive: true, force: true }));
  return error instanceof BundleError && error.message.includes('bare lowercase host name');
}

describe('bare host', () => {
  it.each(good)('%s is accepted by the CLI, the CRD and the mirror', async (domain) => {
    expect(checkDomain(domain)).toBe(domain);
    expect(staticExportReleaseSpecSchema.safeParse(spec(domain)).success).toBe(true);
    expect(await mirrorRefuses(domain)).toBe(false);
  });

  it.each(bad)('%j is refused by the CLI, the CRD and the mirror, with the same rule', async (domain) => {
    expect(() => checkDomain(domain)).toThrow(/not localhost or an IP address/);
    const parsed = staticExportReleaseSpecSchema.safeParse(spec(domain));
    expect(parsed.error?.issues.map((i) => i.message)).toEqual([
      domain.length > 253
        ? expect.stringMatching(/too big/i)
        : expect.stringMatching(/^spec\.domain must be a bare lowercase host name .*not localhost or an IP/),
    ]);
    expect(await mirrorRefuses(domain)).toBe(true);
  });

  it('the CLI lowers an upper-case domain; the CRD asks for lower case', () => {
    expect(checkDomain('Docs.Example.COM')).toBe('docs.example.com');
    expect(staticExportReleaseSpecSchema.safeParse(spec('Docs.Example.com')).success).toBe(false);
  });
});

describe('bare host at the simulator', () => {
  let sim: Simulator;
  // Jobs never finish within the test: only the start answer matters.
  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 600_000 });
  });
  afterAll(() => sim.close());

  it.each(good)('%s starts an export', async (domain) => {
    expect((await call(sim, 'POST', '/v1/static-export/jobs', { domain })).status).toBe(202);
  });

  it.each([...bad, 'Docs.Example.com'])('%j is refused with 400 and the same rule', async (domain) => {
    const res = await call(sim, 'POST', '/v1/static-export/jobs', { domain });
    expect(res.status).toBe(400);
    expect(res.json.details).toEqual([
      { path: 'domain', message: expect.stringMatching(/bare lowercase host name .*not localhost or an IP/) },
    ]);
  });
});
