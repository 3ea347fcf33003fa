// `npm run release` arguments: where to publish, which key signs, where the files go.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ReleaseError } from './errors.ts';

export const USAGE =
  'usage: npm run release -- --to oci://REGISTRY/PATH --sign-key cosign.key [--out DIR] [--plain-http]';

/** oci://host[:port]/path: the registry host and the repository path the artifacts go under. */
const Target = z
  .string()
  .regex(
    /^oci:\/\/[a-z0-9.-]+(:[0-9]+)?\/[a-z0-9._/-]+$/,
    'must be oci://REGISTRY/PATH, e.g. --to oci://ghcr.io/my-org',
  )
  .transform((to) => {
    const [registry, ...path] = to.slice('oci://'.length).replace(/\/+$/, '').split('/');
    return {
      registry: registry as string,
      path: path.join('/'),
      repository: `${registry}/${path.join('/')}`,
    };
  });
export type Target = z.output<typeof Target>;

export const ReleaseOptions = z.object({
  to: Target,
  /** A cosign key reference: a key file (`cosign generate-key-pair`) or env://VARIABLE holding the key. */
  signKey: z.string().min(1),
  out: z.string().min(1),
  /** The registry serves plain http (a local registry); TLS everywhere else. */
  plainHttp: z.boolean(),
});
export type ReleaseOptions = z.output<typeof ReleaseOptions>;

const NO_KEY =
  'no signing key: pass --sign-key cosign.key (make one with `cosign generate-key-pair`) or --sign-key env://COSIGN_PRIVATE_KEY';

/** The options of `argv` (after the script name), or a ReleaseError naming the flag to fix. */
export function parseReleaseArgs(argv: string[]): ReleaseOptions {
  let values: { to?: string; 'sign-key'?: string; out?: string; 'plain-http'?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        to: { type: 'string' },
        'sign-key': { type: 'string' },
        out: { type: 'string' },
        'plain-http': { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new ReleaseError(`${(error as Error).message.split('\n')[0]} (${USAGE})`);
  }
  if (values.to === undefined) throw new ReleaseError(`--to is required (${USAGE})`);
  if (values['sign-key'] === undefined) throw new ReleaseError(NO_KEY);
  const parsed = ReleaseOptions.safeParse({
    to: values.to,
    signKey: values['sign-key'],
    out: values.out ?? '.release',
    plainHttp: values['plain-http'] ?? false,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = `--${String(issue?.path[0] ?? '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new ReleaseError(`${flag} ${issue?.message}`);
  }
  return parsed.data;
}
