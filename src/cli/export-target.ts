// What an export is of, from the flags: --domain (the contract's API revision) or --project-id with
// an optional --base-path (the current revision). What the user names picks the revision.
import type { Command } from 'commander';
import type { ExportTarget } from '../api/index.ts';
import type { ExportBasePath } from '../api/schemas.ts';
import { EXPORT_BASE_PATHS, PROJECT_ID_PATTERN } from '../project.ts';
import type { CliContext } from './context.ts';
import { usageError } from './exit-codes.ts';
import { checkDomain, ENV, flagOrEnv, nonEmpty } from './options.ts';

export interface ProjectFlags {
  projectId?: string;
}

export interface ExportTargetFlags extends ProjectFlags {
  domain?: string;
  basePath?: string;
}

export const PROJECT_ENV_HELP = `  ${ENV.projectId}  project id (when neither --project-id nor --domain is given)`;

/** Adds --project-id (the current API revision's name for a site); `what` says what it is for. */
export function projectOption(command: Command, what: string): Command {
  return command.option(
    '--project-id <id>',
    `${what} (API keys page of the dashboard; env ${ENV.projectId})`,
    nonEmpty,
  );
}

/** Adds --domain, --project-id and --base-path: exactly one of the first two names the site. */
export function exportTargetOptions(command: Command): Command {
  return projectOption(
    command.option(
      '--domain <host>',
      "documentation site to export through the contract's API revision, a bare host (docs.example.com)",
      checkDomain,
    ),
    'project to export through the current API revision',
  ).option(
    '--base-path <path>',
    'with --project-id: the base path the exported links use, "", "/docs" or "/documentation" (default: the deployment\'s)',
  );
}

/**
 * The project id of --project-id, else of the environment; undefined when neither names one. Held
 * to spec.projectId's pattern: an id such as `..` or `.` would be sent as a path segment and
 * normalised into another endpoint (`POST /v1/jobs`, the first revision's start).
 */
export function projectIdFrom(flags: ProjectFlags, ctx: CliContext): string | undefined {
  const id = flagOrEnv(flags.projectId, ENV.projectId, ctx)?.trim();
  if (!id) return undefined;
  if (!new RegExp(PROJECT_ID_PATTERN).test(id)) {
    const from = flags.projectId === undefined ? ENV.projectId : '--project-id';
    throw usageError(
      `${from} "${id.slice(0, 80)}" is not a project id: 1 to 64 letters, digits, "_" or "-" (as spec.projectId), ` +
        'as the API keys page of the dashboard shows it.',
    );
  }
  return id;
}

/** --base-path's value, if the platform knows it; else a usage error naming the flag. */
export function checkedBasePath(value: string): ExportBasePath {
  const known = EXPORT_BASE_PATHS.find((p) => p === value);
  if (known === undefined) {
    throw usageError(
      `--base-path "${value}" is not a base path the platform knows: use one of ${EXPORT_BASE_PATHS.map((p) => `"${p}"`).join(', ')}.`,
    );
  }
  return known;
}

/**
 * The site the flags name. The environment's project id stands in for --project-id only when
 * --domain is not given either, so a pipeline's global variable does not collide with a --domain.
 */
export async function exportTarget(flags: ExportTargetFlags, ctx: CliContext): Promise<ExportTarget> {
  if (flags.domain !== undefined && flags.projectId !== undefined) {
    throw usageError('--domain and --project-id both name the site to export: give exactly one of them.');
  }
  const projectId = flags.domain === undefined ? projectIdFrom(flags, ctx) : undefined;
  if (flags.basePath !== undefined && projectId === undefined) {
    throw usageError(
      '--base-path applies to an export by --project-id only; --domain exports have no base path.',
    );
  }
  if (projectId !== undefined) {
    if (flags.basePath === undefined) return { projectId };
    return { projectId, basePath: checkedBasePath(flags.basePath) };
  }
  if (flags.domain !== undefined) return { domain: flags.domain };
  throw usageError(
    `--domain or --project-id is required (or set ${ENV.projectId}): --domain <host> exports through the ` +
      "contract's API revision, --project-id <id> through the current one.",
  );
}
