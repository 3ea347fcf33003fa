import { resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { assertReplaceable } from '../bundle/destination.ts';
import { BundleError } from '../bundle/errors.ts';

export { ALLOW_PRIVATE_FLAG } from '../bundle/errors.ts';

import { type BundleLimits, DEFAULT_DEADLINE_MS, DEFAULT_LIMITS } from '../bundle/limits.ts';
import type { LinkDestinations } from '../bundle/link-destination.ts';
import { formatDuration } from '../crd/duration.ts';
import type { Logger } from '../log.ts';
import type { CliContext } from './context.ts';
import { usageError } from './exit-codes.ts';
import { durationOption, integer } from './options.ts';
import { downloadProgress, type Reporter } from './output.ts';

/** The bundle caps as flags, shared by fetch, export, mirror and the operator. */
export interface BundleLimitFlags {
  maxArchiveBytes: number;
  maxExtractedBytes: number;
  maxEntries: number;
  maxCompressionRatio: number;
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** commander argument parser for sizes: bytes, or a number with KiB, MiB, GiB or TiB. */
export function byteSize(value: string): number {
  const m = /^(\d+)\s*(?:([kmgt])i?b?)?$/i.exec(value.trim());
  const bytes = m ? Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase()] as number) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new InvalidArgumentError('expected a size such as 2147483648, 512MiB or 2GiB.');
  }
  return bytes;
}

/** A size as the flags take it, in the largest unit that divides it: 2147483648 is "2GiB". */
export function sizeText(bytes: number): string {
  for (const [unit, scale] of [
    ['TiB', UNITS.t],
    ['GiB', UNITS.g],
    ['MiB', UNITS.m],
    ['KiB', UNITS.k],
  ] as const) {
    if (scale !== undefined && bytes >= scale && bytes % scale === 0) return `${bytes / scale}${unit}`;
  }
  return String(bytes);
}

/** A size flag whose help shows its default as the docs write it (2GiB, not 2147483648). */
function sizeOption(flags: string, description: string, bytes: number): Option {
  return new Option(flags, description).argParser(byteSize).default(bytes, sizeText(bytes));
}

/** Adds --max-archive-bytes, --max-extracted-bytes, --max-entries and --max-compression-ratio. */
export function bundleLimitOptions(command: Command): Command {
  return command
    .addOption(
      sizeOption(
        '--max-archive-bytes <size>',
        'refuse a larger archive (bytes, or with KiB/MiB/GiB)',
        DEFAULT_LIMITS.maxArchiveBytes,
      ),
    )
    .addOption(
      sizeOption(
        '--max-extracted-bytes <size>',
        'refuse an archive whose files add up to more (bytes, or with KiB/MiB/GiB)',
        DEFAULT_LIMITS.maxExtractedBytes,
      ),
    )
    .option(
      '--max-entries <n>',
      'refuse an archive with more entries (files, directories, links)',
      integer(1),
      DEFAULT_LIMITS.maxEntries,
    )
    .option(
      '--max-compression-ratio <n>',
      'refuse an archive that inflates more than this many times (compression bombs)',
      integer(1),
      DEFAULT_LIMITS.maxCompressionRatio,
    );
}

export function limitsFrom(flags: BundleLimitFlags): BundleLimits {
  return {
    maxArchiveBytes: flags.maxArchiveBytes,
    maxExtractedBytes: flags.maxExtractedBytes,
    maxEntries: flags.maxEntries,
    maxCompressionRatio: flags.maxCompressionRatio,
  };
}

/** --allow-private-bundle-links (export, mirror sync, operator): the opt-in of link-destination.ts. */
export const ALLOW_PRIVATE_HELP =
  "let the platform's bundle link lead to a private, loopback or link-local address (a private mirror); " +
  "without it only public addresses and the admin API's own host are connected to";

/** What a bundle download of the CLI is given: its caps, deadline (and retries), log and progress. */
export interface BundleDownload {
  limits: BundleLimits;
  download: { deadlineMs: number; retries?: number; destinations?: LinkDestinations };
  logger: Logger;
  onProgress?: (received: number, total: number | undefined) => void;
}

/**
 * The set-up every command that downloads a bundle makes (fetch and sync, export, mirror and its push
 * and save): the caps from the flags and, given a reporter, progress on stderr.
 */
export function bundleDownload(
  flags: BundleLimitFlags,
  download: BundleDownload['download'],
  logger: Logger,
  out?: Reporter,
): BundleDownload {
  return {
    limits: limitsFrom(flags),
    download,
    logger,
    ...(out ? { onProgress: (received, total) => out.progress(downloadProgress(received, total)) } : {}),
  };
}

/** The overall download deadline (fetch/mirror --timeout, export/operator --download-timeout), in milliseconds. */
export function downloadTimeoutOption(ctx: CliContext, flag: '--timeout' | '--download-timeout'): Option {
  return durationOption(
    ctx,
    `${flag} <duration>`,
    'give up on the bundle download after this long in all, retries included',
    {
      min: '1s',
      default: formatDuration(DEFAULT_DEADLINE_MS),
      legacyUnit: 's',
    },
  );
}

/**
 * Refuses, before anything is downloaded, a destination that holds something this tool did not
 * extract there: `--dest .` must not wipe the current directory.
 */
export async function checkDestination(
  flag: string,
  dest: string,
  force: boolean | undefined,
): Promise<void> {
  if (force) return;
  try {
    await assertReplaceable(resolve(dest));
  } catch (error) {
    if (error instanceof BundleError && error.reason === 'DestinationNotOurs') {
      throw usageError(
        `${flag}: ${error.message}. Nothing was changed. Choose a new or empty directory, or pass --force to replace its contents.`,
      );
    }
    throw error;
  }
}
