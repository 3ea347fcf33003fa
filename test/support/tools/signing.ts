// Keys and the real cosign CLI for the signature tests: key pairs as a user makes them with
// openssl, and `cosign verify --key` run offline as inside an air gap.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ProcessResult, runProcess } from '../../../scripts/run-process.ts';

export async function openssl(args: string[]): Promise<void> {
  const result = await runProcess('openssl', args);
  if (result.code !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

/**
 * A self-signed server certificate (its own CA) for `names` (subjectAltName entries such as
 * IP:127.0.0.1, DNS:localhost): cert.pem and key.pem in `dir`, which is returned.
 */
export async function selfSignedCert(
  dir: string,
  names = ['IP:127.0.0.1', 'DNS:localhost'],
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test-registry',
    '-addext',
    `subjectAltName=${names.join(',')}`,
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
  ]);
  return dir;
}

export interface KeyPair {
  /** PEM (PKCS#8 / SPKI). */
  private: string;
  public: string;
  privateFile: string;
  publicFile: string;
}

/** An ECDSA P-256 key pair written to `dir` as `openssl genpkey` and `openssl pkey -pubout` write it. */
export async function opensslKeyPair(dir: string, name: string): Promise<KeyPair> {
  const privateFile = join(dir, `${name}.key`);
  const publicFile = join(dir, `${name}.pub`);
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', privateFile]);
  await openssl(['pkey', '-in', privateFile, '-pubout', '-out', publicFile]);
  return {
    private: await readFile(privateFile, 'utf8'),
    public: await readFile(publicFile, 'utf8'),
    privateFile,
    publicFile,
  };
}

/**
 * The real cosign with its own HOME (it keeps a cache there) and only `env` besides: offline,
 * nothing from the developer's shell.
 */
export function runCosign(
  cosign: string,
  home: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessResult> {
  return runProcess(cosign, args, { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } });
}

/** `cosign verify --key` as a user inside the gap runs it: no transparency log, plain-http loopback registry. */
export function cosignVerify(
  cosign: string,
  home: string,
  publicKeyFile: string,
  reference: string,
): Promise<ProcessResult> {
  return runCosign(cosign, home, [
    'verify',
    '--key',
    publicKeyFile,
    '--private-infrastructure',
    '--allow-http-registry',
    '--output',
    'json',
    reference,
  ]);
}

/**
 * A private CA (ca.pem, ca-key.pem) and a server certificate it signed for `names` (cert.pem,
 * key.pem), all in `dir`, made with openssl as a company CA would: returns `dir`.
 */
export async function caSignedCert(dir: string, names = ['IP:127.0.0.1', 'DNS:localhost']): Promise<string> {
  await mkdir(dir, { recursive: true });
  const at = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl([
    'req',
    '-x509',
    ...ec,
    '-days',
    '1',
    '-subj',
    '/CN=Test Company CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    at('ca-key.pem'),
    '-out',
    at('ca.pem'),
  ]);
  await openssl([
    'req',
    ...ec,
    '-subj',
    '/CN=git.internal',
    '-keyout',
    at('key.pem'),
    '-out',
    at('server.csr'),
  ]);
  await writeFile(at('ext.cnf'), `subjectAltName=${names.join(',')}\nextendedKeyUsage=serverAuth\n`);
  await openssl([
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca-key.pem'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    at('ext.cnf'),
    '-out',
    at('cert.pem'),
  ]);
  return dir;
}
