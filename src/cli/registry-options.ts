// Registry flags shared by the `mirror` subcommands that talk to a registry, and the client they
// make: credentials from flags/env or the Docker/Podman auth file, TLS trust, plain http.
import type { Command } from 'commander';
import type { OciReference, RegistryClient } from '../oci/index.ts';
import { registerSecret } from '../redact.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT, usageError } from './exit-codes.ts';
import { readFlagFile } from './flag-file.ts';
import { flagOrEnv } from './options.ts';

export const REGISTRY_ENV = {
  username: 'STATIC_EXPORT_REGISTRY_USERNAME',
  password: 'STATIC_EXPORT_REGISTRY_PASSWORD',
} as const;

export interface RegistryFlags {
  username?: string;
  passwordStdin?: boolean;
  authfile?: string;
  caFile?: string;
  plainHttp?: boolean;
}

export function registryOptions(command: Command): Command {
  return command
    .option('--username <name>', `registry user (else env ${REGISTRY_ENV.username}, else the auth file)`)
    .option('--password-stdin', `read the registry password from stdin (else env ${REGISTRY_ENV.password})`)
    .option(
      '--authfile <file>',
      'Docker/Podman auth file (default: $REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, ~/.docker/config.json)',
    )
    .option('--ca-file <pem>', 'trust this CA bundle for the registry TLS certificate')
    .option('--plain-http', 'talk plain http to a registry that is not on loopback (no TLS)');
}

export const REGISTRY_ENV_HELP = `
  ${REGISTRY_ENV.username}, ${REGISTRY_ENV.password}  registry credentials (when no flags)
  REGISTRY_AUTH_FILE, XDG_RUNTIME_DIR, DOCKER_CONFIG  where the auth file is looked for`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A client for the registry of `ref`, with the credentials and trust the flags give. */
export async function registryClientFor(
  ref: OciReference,
  flags: RegistryFlags,
  ctx: CliContext,
  extra: Partial<ConstructorParameters<typeof RegistryClient>[0]> = {},
): Promise<RegistryClient> {
  const { RegistryClient, credentialsFromAuthFiles } = await import('../oci/index.ts');
  const username = flagOrEnv(flags.username, REGISTRY_ENV.username, ctx);
  let password: string | undefined;
  if (flags.passwordStdin) password = await readStdin();
  else password = ctx.env[REGISTRY_ENV.password];
  if (password !== undefined) registerSecret(password);
  if (flags.passwordStdin && !username) throw usageError('--password-stdin needs --username.');
  if (username !== undefined && !password) {
    throw new CliError(
      EXIT.auth,
      `--username ${username} has no password: pass --password-stdin or set ${REGISTRY_ENV.password}.`,
    );
  }
  const credentials =
    username !== undefined && password
      ? { username, password }
      : await credentialsFromAuthFiles(ref.registry, ctx.env, flags.authfile);
  const ca = flags.caFile === undefined ? undefined : await readFlagFile('--ca-file', flags.caFile);
  return new RegistryClient({
    registry: ref.registry,
    ...(credentials
      ? { credentials: { username: credentials.username, password: credentials.password } }
      : {}),
    ...(ca ? { ca } : {}),
    ...(flags.plainHttp ? { plainHttp: true } : {}),
    ...extra,
  });
}
