// The signed trigger for pipelines: the operator process serves its receiver, `static-export
// trigger` is the client. A valid call exports again; forged, replayed, oversized, unknown and
// rate-limited calls are refused with their status and change nothing; the token shows nowhere.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { REQUESTED_AT_ANNOTATION, type StaticExportRelease } from '../../../src/crd/index.ts';
import { microTime } from '../../../src/runtime/leader-election.ts';
import { MAX_BODY_BYTES, SIGNATURE_HEADER, sign, TIMESTAMP_HEADER } from '../../../src/trigger/contract.ts';
import { eventually, kubeconfig, kubectlOk, ROOT } from '../../support/cluster/kube.ts';
import { OperatorProcess } from '../../support/cluster/operator-process.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, applySecret, getRelease } from '../../support/cluster/resources.ts';
import { tempDir } from '../../support/temp.ts';
import { type CliResult, runCli } from '../../support/tools/run-cli.ts';

const TOKEN = `tt-${randomBytes(24).toString('hex')}`;
const TOKEN_SECRET = 'pipeline-trigger';
const PER_MINUTE = 2;

const suite = useOperatorSuite({
  namespaces: ['trigger'],
  unwatched: ['trigger-other'],
  sim: { exportDurationMs: 300 },
  operator: false,
});
let operator: OperatorProcess;
let receiver: string;
let tokenFile: string;
const cliOutput: string[] = [];

/** The token as a pipeline keeps it: a file written with a final newline. */
function fileWith(text: string): string {
  const file = join(tempDir('trigger-token-'), 'token');
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  return file;
}

async function trigger(ref: string, file = tokenFile): Promise<CliResult> {
  const r = await runCli(['trigger', '--url', receiver, '--token-file', file, ref]);
  cliOutput.push(r.stdout, r.stderr);
  return r;
}

interface Call {
  token?: string;
  timestamp?: number;
  body?: Uint8Array;
  /** Sign this instead of the body sent. */
  signedBody?: Uint8Array;
  namespace?: string;
}

/** A call made by hand, to send what the CLI never would. */
function signed(name: string, c: Call = {}): { url: string; init: RequestInit } {
  const timestamp = String(c.timestamp ?? Math.floor(Date.now() / 1000));
  const body = c.body ?? Buffer.from(JSON.stringify({ id: randomBytes(8).toString('hex') }));
  return {
    url: `${receiver}/hooks/${c.namespace ?? suite.ns}/${name}`,
    init: {
      method: 'POST',
      headers: {
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: sign(c.token ?? TOKEN, timestamp, c.signedBody ?? body),
      },
      body,
    },
  };
}

type Answer = { status: number; message: string };

async function post(call: { url: string; init: RequestInit }): Promise<Answer> {
  const res = await fetch(call.url, call.init);
  const text = await res.text();
  return { status: res.status, message: (JSON.parse(text) as { message: string }).message };
}

const requestedAt = (r: StaticExportRelease) => r.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
const isReady = (r: StaticExportRelease) =>
  r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** A release that accepts triggers (or not), published once: later exports are the trigger's doing. */
async function publishedRelease(name: string, tokenSecret: string | null = TOKEN_SECRET) {
  await applyRelease(suite.ns, name, {
    domain: `${name}.example.com`,
    ...(tokenSecret ? { trigger: { tokenSecretRef: { name: tokenSecret } } } : {}),
  });
  return eventually(`${name} Ready`, async () => {
    const r = await getRelease(suite.ns, name);
    return isReady(r) && r.status?.observedGeneration === r.metadata.generation ? r : undefined;
  });
}

/** The triggered export done: the annotation's value handled and the release Ready. */
const settled = (name: string) =>
  eventually(`${name}: the requested export handled`, async () => {
    const r = await getRelease(suite.ns, name);
    return requestedAt(r) && r.status?.lastHandledRequestedAt === requestedAt(r) && isReady(r)
      ? r
      : undefined;
  });

/** Nothing happened to the release: no annotation change, no export started for it. */
async function untouched(name: string, before: StaticExportRelease) {
  const now = await getRelease(suite.ns, name);
  expect(requestedAt(now)).toBe(requestedAt(before));
  expect(now.status?.export?.jobId).toBe(before.status?.export?.jobId);
}

beforeAll(async () => {
  // Written with a newline, as `kubectl create secret --from-file` of an echoed file is.
  await applySecret(suite.ns, TOKEN_SECRET, { token: `${TOKEN}\n` });
  tokenFile = fileWith(TOKEN);
  operator = OperatorProcess.start({
    namespaces: [suite.ns],
    apiBaseUrl: suite.sim.baseUrl,
    trigger: { requestsPerMinute: PER_MINUTE },
  });
  const started = await operator.waitFor(/"triggerPort":\d+/);
  receiver = `http://127.0.0.1:${/"triggerPort":(\d+)/.exec(started)?.[1]}`;
});

afterAll(async () => {
  await operator?.kill('SIGTERM');
});

describe('a valid call', () => {
  it('through `static-export trigger` exports again, like the requested-at annotation, with an event', async () => {
    const before = await publishedRelease('valid');
    const started = suite.sim.exportJobsStarted();
    const r = await trigger(`${suite.ns}/valid`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Export requested for ${suite.ns}/valid at \\d{4}-\\d\\d-\\d\\dT`));

    const after = await settled('valid');
    const annotated = requestedAt(after);
    expect(after.status?.export?.jobId).not.toBe(before.status?.export?.jobId);
    expect(suite.sim.exportJobsStarted()).toBe(started + 1);

    const events = JSON.parse(
      await kubectlOk(['get', 'events.events.k8s.io', '-n', suite.ns, '-o', 'json']),
    ) as {
      items: { reason: string; note: string; regarding: { name: string } }[];
    };
    const accepted = events.items.filter(
      (e) => e.reason === 'TriggerAccepted' && e.regarding.name === 'valid',
    );
    expect(accepted.map((e) => e.note)).toEqual([
      `A signed trigger call asked for an export (${REQUESTED_AT_ANNOTATION}: ${annotated})`,
    ]);
  });
});

describe('a release created after a call for its name', () => {
  it('takes signed calls as soon as the watch delivers it (no 404 window)', async () => {
    expect((await post(signed('newborn'))).status).toBe(404);
    await applyRelease(suite.ns, 'newborn', {
      domain: 'newborn.example.com',
      trigger: { tokenSecretRef: { name: TOKEN_SECRET } },
    });
    // Calls until the receiver knows it: the first answer other than 404 is the 202, well within
    // the 10 s the receiver used to remember a name as unknown.
    const answer = await eventually(
      'newborn known to the receiver',
      async () => {
        const a = await post(signed('newborn'));
        return a.status !== 404 && a;
      },
      5_000,
    );
    expect(answer).toEqual({ status: 202, message: `export requested for ${suite.ns}/newborn` });
  });
});

describe('a standby replica', () => {
  it('serves the receiver from its own watch of the releases, without leading', async () => {
    // Another replica holds the Lease for an hour: this one stands by, its reconcilers never started.
    await kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'static-export-operator', namespace: suite.ns },
        spec: { holderIdentity: 'elsewhere', leaseDurationSeconds: 3600, renewTime: microTime(new Date()) },
      }),
    );
    const standby = OperatorProcess.start({
      namespaces: [suite.ns],
      apiBaseUrl: suite.sim.baseUrl,
      leaseNamespace: suite.ns,
      trigger: { requestsPerMinute: PER_MINUTE },
    });
    try {
      const port = /"triggerPort":(\d+)/.exec(await standby.waitFor(/"triggerPort":\d+/))?.[1];
      await applyRelease(suite.ns, 'on-standby', {
        domain: 'on-standby.example.com',
        trigger: { tokenSecretRef: { name: TOKEN_SECRET } },
      });
      const answer = await eventually('the standby knows on-standby', async () => {
        const call = signed('on-standby');
        const a = await post({ ...call, url: call.url.replace(receiver, `http://127.0.0.1:${port}`) });
        return a.status !== 404 && a.status !== 503 && a;
      });
      expect(answer).toEqual({ status: 202, message: `export requested for ${suite.ns}/on-standby` });
      expect(standby.lines.some((l) => l.includes('controllers started'))).toBe(false);
    } finally {
      await standby.kill('SIGTERM');
    }
  });
});

describe('--wait', () => {
  const waitFor = async (name: string) => {
    const r = await runCli([
      'trigger',
      '--url',
      receiver,
      '--token-file',
      tokenFile,
      '--kubeconfig',
      kubeconfig(),
      `${suite.ns}/${name}`,
      '--wait=2m',
    ]);
    cliOutput.push(r.stdout, r.stderr);
    return r;
  };

  it('returns once the export the call asked for is published, with its version', async () => {
    const before = await publishedRelease('waited');
    const r = await waitFor('waited');
    expect(r.code, r.stderr).toBe(0);
    const after = await getRelease(suite.ns, 'waited');
    expect(after.status?.lastHandledRequestedAt).toBe(requestedAt(after));
    expect(after.status?.export?.jobId).not.toBe(before.status?.export?.jobId);
    expect(after.status?.export?.finishedAt).toBeDefined();
    expect(r.stdout).toBe(`Published ${after.status?.current?.version} for ${suite.ns}/waited.\n`);
  });

  it("exits 4 with the release's reason when the export it asked for is refused", async () => {
    await publishedRelease('waited-bad');
    suite.sim.configure({ faults: ['start:noindex:1:1'] });
    try {
      const r = await waitFor('waited-bad');
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(
        new RegExp(
          `error: the export requested for ${suite.ns}/waited-bad at \\S+ failed: PublishGateFailed: Export job \\S+ was not published`,
        ),
      );
    } finally {
      suite.sim.configure({ faults: [] });
    }
  });
});

describe('the GitOps page (docs/gitops.md)', () => {
  it("curl and openssl example makes a valid call, and the CLI's --json says so in a line", async () => {
    await publishedRelease('readme');
    const readme = readFileSync(join(ROOT, 'docs', 'gitops.md'), 'utf8');
    const snippet = /For example with curl and openssl:\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet).toContain('/hooks/docs/docs');
    const dir = tempDir('trigger-readme-');
    writeFileSync(join(dir, 'token.txt'), `${TOKEN}\n`);
    const r = await runProcess(
      'bash',
      ['-euo', 'pipefail', '-c', snippet?.replace('/hooks/docs/docs', `/hooks/${suite.ns}/readme`) ?? ''],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', URL: receiver },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ message: `export requested for ${suite.ns}/readme` });
    await settled('readme');

    const json = await runCli([
      'trigger',
      '--json',
      '--url',
      receiver,
      '--token-file',
      tokenFile,
      `${suite.ns}/readme`,
    ]);
    cliOutput.push(json.stdout, json.stderr);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      event: 'triggered',
      release: `${suite.ns}/readme`,
      requestedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });
});

describe('refused calls change nothing', () => {
  it('forged: a wrong token (exit 3), or a body other than the one signed, get 401', async () => {
    const before = await publishedRelease('forged');
    const wrong = await trigger(`${suite.ns}/forged`, fileWith(`tt-${randomBytes(24).toString('hex')}`));
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain(
      `error: the receiver refused the call for ${suite.ns}/forged: signature does not match`,
    );
    const tampered = await post(
      signed('forged', { body: Buffer.from('{"id":"b"}'), signedBody: Buffer.from('{"id":"a"}') }),
    );
    expect(tampered).toEqual({ status: 401, message: 'signature does not match' });
    const unsigned = await fetch(`${receiver}/hooks/${suite.ns}/forged`, { method: 'POST', body: '{}' });
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { message: string }).message).toMatch(/^sign the call: x-timestamp/);
    await untouched('forged', before);
  });

  it('replayed: the same signed call again, or one signed more than 5 minutes ago or ahead, get 401', async () => {
    await publishedRelease('replayed');
    const call = signed('replayed');
    expect((await post(call)).status).toBe(202);
    const once = await settled('replayed');
    expect(await post(call)).toEqual({
      status: 401,
      message: 'this signed call was already received: sign each call anew',
    });
    // Well past the 5-minute window either way: a call a second late must not slip back inside it.
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 330, now + 330]) {
      expect(await post(signed('replayed', { timestamp }))).toEqual({
        status: 401,
        message:
          "x-timestamp is more than 5 minutes from the receiver's clock: a replayed call, or a wrong clock",
      });
    }
    await untouched('replayed', once);
  });

  it('oversized: a body over 64 KiB gets 413, with or without a Content-Length', async () => {
    const before = await publishedRelease('oversized');
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 'a');
    expect(await post(signed('oversized', { body: big }))).toEqual({
      status: 413,
      message: 'the body must be at most 65536 bytes',
    });
    // Streamed (chunked): the receiver counts what arrives and stops reading past the cap.
    const streamed = signed('oversized', { body: big });
    const res = await fetch(streamed.url, {
      ...streamed.init,
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    await untouched('oversized', before);
  });

  it('unknown: no such release (exit 2), a release without spec.trigger, an unwatched namespace get 404', async () => {
    const missing = await trigger(`${suite.ns}/no-such-release`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `the receiver knows no release ${suite.ns}/no-such-release that accepts triggers`,
    );
    const before = await publishedRelease('no-trigger', null);
    expect(await post(signed('no-trigger'))).toEqual({
      status: 404,
      message: `no StaticExportRelease ${suite.ns}/no-trigger accepts triggers here`,
    });
    await untouched('no-trigger', before);
    expect((await post(signed('valid', { namespace: suite.unwatched[0] }))).status).toBe(404);
  });

  it('rate limited: past the per-release limit, 429 (exit 6) with Retry-After', async () => {
    await publishedRelease('limited');
    for (let i = 0; i < PER_MINUTE; i++) expect((await trigger(`${suite.ns}/limited`)).code).toBe(0);
    const last = await settled('limited');
    const limited = await trigger(`${suite.ns}/limited`);
    expect(limited.code).toBe(6);
    expect(limited.stderr).toMatch(
      /error: rate limited by the receiver; retry after \d+ s: [a-z0-9-]+\/limited takes at most 2 calls a minute/,
    );
    const res = await fetch(signed('limited').url, signed('limited').init);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await untouched('limited', last);
    // The limit is per release: another one still takes calls.
    await publishedRelease('limited-other');
    expect((await post(signed('limited-other'))).status).toBe(202);
  });

  it('a missing token Secret: 401 to the caller, the log names the Secret', async () => {
    const before = await publishedRelease('no-secret', 'absent-token');
    expect(await post(signed('no-secret'))).toEqual({ status: 401, message: 'signature does not match' });
    await operator.waitFor(
      /"why":"Secret [a-z0-9-]+\/absent-token does not exist".*no token to check it with/,
    );
    await untouched('no-secret', before);
  });
});

describe('the token', () => {
  it('is in no log line, event, status or CLI output', async () => {
    const everything = [
      await kubectlOk(['get', 'ser', '-n', suite.ns, '-o', 'json']),
      await kubectlOk(['get', 'events.events.k8s.io', '-n', suite.ns, '-o', 'json']),
      operator.lines.join('\n'),
      ...cliOutput,
    ].join('\n');
    expect(operator.lines.some((l) => l.includes('trigger refused'))).toBe(true);
    expect(everything).not.toContain(TOKEN);
  });
});
