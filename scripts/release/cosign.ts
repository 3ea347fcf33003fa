// cosign-format signatures with a key: OCI artifacts (image, charts) by digest, files as blobs.
// No transparency log upload: verification is `--key` only, which also works inside an air gap.
import { existsSync } from 'node:fs';
import { ReleaseError } from './errors.ts';
import { runTool } from './tools.ts';

/** A ReleaseError unless `key` is a key file that exists or an env:// variable that is set. */
export function assertSigningKey(key: string): void {
  const variable = /^env:\/\/(.+)$/.exec(key)?.[1];
  if (variable !== undefined) {
    if (!process.env[variable])
      throw new ReleaseError(`--sign-key ${key}: ${variable} is not set; export the private key in it`);
  } else if (!existsSync(key)) {
    throw new ReleaseError(
      `--sign-key ${key}: no such file; make a key pair with \`cosign generate-key-pair\` or name yours`,
    );
  }
}

export interface Signer {
  cosign: string;
  key: string;
  plainHttp: boolean;
}

/** Signs the OCI artifact `reference` (repository@sha256:…) in its registry. */
export async function signArtifact(signer: Signer, reference: string): Promise<void> {
  await runTool(`cosign sign ${reference}`, signer.cosign, [
    'sign',
    '--yes',
    '--key',
    signer.key,
    '--tlog-upload=false',
    ...(signer.plainHttp ? ['--allow-http-registry', '--allow-insecure-registry'] : []),
    reference,
  ]);
}

/** Signs the file `file`; the signature (base64) goes to `file`.sig, which is returned. */
export async function signBlob(signer: Signer, file: string): Promise<string> {
  const signature = `${file}.sig`;
  await runTool(`cosign sign-blob ${file}`, signer.cosign, [
    'sign-blob',
    '--yes',
    '--key',
    signer.key,
    '--tlog-upload=false',
    '--output-signature',
    signature,
    file,
  ]);
  return signature;
}
