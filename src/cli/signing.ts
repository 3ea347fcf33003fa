// The one place signing hooks into `mirror push`, `load` and `sync`: `--sign-key` is read and
// checked before anything is downloaded or pushed, and each manifest digest is signed in cosign's
// format (src/oci/sign.ts) before moving tags point at it, so a followed tag never names an
// unsigned version. The key is only ever read from its file: never printed, never in an error.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { PushImageOptions } from '../oci/image.ts';
import type { Signed } from '../oci/sign.ts';
import { usageError } from './exit-codes.ts';
import type { Reporter } from './output.ts';

export interface SigningFlags {
  signKey?: string;
}

export function signingOptions(command: Command): Command {
  return command.option(
    '--sign-key <file>',
    'sign each pushed version with this ECDSA P-256 private key (unencrypted PEM, e.g. from ' +
      '`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`), in the format ' +
      '`cosign verify --key` checks',
  );
}

interface SignedImage extends Signed {
  registry: string;
  repository: string;
  /** The image manifest that was signed. */
  digest: string;
}

/** The hook that signs each pushed manifest, or undefined without --sign-key. */
export async function signingHook(
  flags: SigningFlags,
  onSigned: (signed: SignedImage) => void = () => {},
): Promise<PushImageOptions['afterManifest']> {
  if (flags.signKey === undefined) return undefined;
  let pem: string;
  try {
    pem = await readFile(flags.signKey, 'utf8');
  } catch (error) {
    throw usageError(
      `--sign-key ${flags.signKey} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ` +
        'give the file of an ECDSA P-256 private key in PEM.',
    );
  }
  const { signingKey, signManifest } = await import('../oci/sign.ts');
  signingKey(pem); // refused here, before anything is pushed, when it cannot sign
  return async (image, client) => {
    const signed = await signManifest(client, image.repository, image.digest, pem);
    onSigned({ registry: client.registry, repository: image.repository, digest: image.digest, ...signed });
  };
}

/** A signature written (or found) by --sign-key: a `signed` event and a line. */
export function reportSigned(out: Reporter, signed: SignedImage): void {
  out.event('signed', { ...signed });
  const image = `${signed.registry}/${signed.repository}@${signed.digest}`;
  out.info(
    signed.outcome === 'signed'
      ? `Signed ${image} (cosign signature ${signed.signatureDigest})`
      : `${image} is signed with this key already`,
  );
}
