// writeVersion to an HTTPS Git server whose certificate a private CA made in the test signed (as a
// self-hosted GitLab or Gitea behind a company CA): accepted with that CA as the Secret's ca.crt
// (Flux's key, read from a Flux-format Secret), refused without it or with another CA, and the CA
// is trusted for that call's connections only.
import { readFileSync } from 'node:fs';
import { get } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitCredentialsFromSecret } from '../../src/git/credentials.ts';
import type { GitCredentials } from '../../src/git/types.ts';
import { writeVersion } from '../../src/git/write-version.ts';
import { writeRequest } from '../support/fixtures/write-request.ts';
import { GitServer } from '../support/servers/git-server.ts';
import { tempDir } from '../support/temp.ts';
import { caSignedCert } from '../support/tools/signing.ts';

const USER = 'writer';
const PASSWORD = 'token-private-ca-0123456789';
const VALUES = 'staticExport:\n  version: "sha256-old"\n';

let server: GitServer;
let ca: string;
let otherCa: string;

beforeAll(async () => {
  const dir = await caSignedCert(tempDir('git-ca-'));
  ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
  otherCa = readFileSync(join(await caSignedCert(tempDir('git-other-ca-')), 'ca.pem'), 'utf8');
  const tls = {
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
  };
  server = await new GitServer(tempDir('git-https-'), { username: USER, password: PASSWORD, tls }).start();
  server.createRepo('site', { 'deploy/values.yaml': VALUES });
});
afterAll(() => server?.stop());

const b64 = (s: string) => Buffer.from(s).toString('base64');

const request = (credentials: GitCredentials, version = 'sha256-new') =>
  writeRequest(server.url('site'), credentials, { version });

describe('a private CA (ca.crt)', () => {
  it('is trusted from a Flux-format Secret (username, password, ca.crt): the push lands', async () => {
    const read = gitCredentialsFromSecret('docs/gitea', {
      username: b64(USER),
      password: b64(PASSWORD),
      'ca.crt': b64(ca),
    });
    if (!('credentials' in read)) throw new Error(read.failure.message);
    const outcome = await writeVersion(request(read.credentials));
    expect(outcome).toMatchObject({ outcome: 'Committed' });
    expect(outcome.outcome === 'Committed' && outcome.commit).toBe(server.head('site'));
  });

  it('without it the server is refused before any request carries the token, and the message names ca.crt', async () => {
    const seen = server.seen.length;
    const outcome = await writeVersion(
      request({ kind: 'basic', username: USER, password: PASSWORD }, 'sha256-2'),
    );
    expect(outcome).toEqual({
      outcome: 'Failed',
      reason: 'GitUnreachable',
      message: expect.stringMatching(
        /presented a TLS certificate that could not be verified \[UNABLE_TO_VERIFY_LEAF_SIGNATURE\]: if a private CA signed it, put that CA \(PEM\) in the Secret as ca\.crt/,
      ),
    });
    expect(server.seen.length).toBe(seen);
  });

  it('another CA is refused, saying the ca.crt did not sign it', async () => {
    const outcome = await writeVersion(
      request({ kind: 'basic', username: USER, password: PASSWORD, caCert: otherCa }, 'sha256-3'),
    );
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnreachable' });
    expect(outcome.outcome === 'Failed' && outcome.message).toContain("the Secret's ca.crt did not sign it");
  });

  it('is trusted for that repository only: the process does not trust it afterwards', async () => {
    await writeVersion(
      request({ kind: 'basic', username: USER, password: PASSWORD, caCert: ca }, 'sha256-4'),
    );
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      get(`${server.origin}/site.git/info/refs?service=git-upload-pack`, (res) => {
        res.resume();
        resolve(new Error(`answered ${res.statusCode}`));
      }).on('error', resolve);
    });
    expect(error.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('a ca.crt that is no certificate is refused when the Secret is read', () => {
    const read = gitCredentialsFromSecret('docs/gitea', {
      username: b64(USER),
      password: b64(PASSWORD),
      'ca.crt': b64('not a certificate'),
    });
    expect(read).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message:
          'Secret docs/gitea named in spec.gitWriteBack.secretRef has a ca.crt that is not a PEM certificate: put the CA certificate (-----BEGIN CERTIFICATE-----) there',
      },
    });
  });
});
