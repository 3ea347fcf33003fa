import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { AdminApiError, ExportStatus, GeneratedBundle } from '../../api/index.ts';
import { completedDurationMs } from '../../api/poll-schedule.ts';
import { formatDuration } from '../../crd/duration.ts';
import {
  ALLOW_PRIVATE_FLAG,
  ALLOW_PRIVATE_HELP,
  type BundleLimitFlags,
  bundleDownload,
  bundleLimitOptions,
  checkDestination,
  downloadTimeoutOption,
} from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP } from '../exit-codes.ts';
import { startMayHaveCreated, startWhenFree } from '../export-start.ts';
import {
  type ExportTargetFlags,
  exportTarget,
  exportTargetOptions,
  PROJECT_ENV_HELP,
} from '../export-target.ts';
import {
  API_ENV_HELP,
  type ApiFlags,
  apiClient,
  apiOptions,
  cliLogger,
  durationOption,
  waitTimeoutOption,
} from '../options.ts';
import { formatBytes, formatElapsed, Reporter } from '../output.ts';
import { exportScheduleDelay, fixedDelay, pollUntil } from '../poll.ts';
import { type SiteGateFlags, siteGate, siteGateOptions } from '../site-gate.ts';

interface ExportFlags extends ApiFlags, SiteGateFlags, BundleLimitFlags, ExportTargetFlags {
  out?: string;
  force?: boolean;
  downloadTimeout: number;
  valuesOut?: string;
  json?: boolean;
  allowPrivateBundleLinks?: boolean;
  pollInterval?: number;
  expectedDuration?: number;
  timeout: number;
}

/** Whole seconds as a duration (2m30s), the form --expected-duration takes. */
const inSeconds = (ms: number) => formatDuration(Math.max(1, Math.round(ms / 1000)) * 1000);

function describeStatus(job: ExportStatus, elapsedMs: number): string {
  const pages = job.pageCount === undefined ? '' : `, ${job.pageCount} pages`;
  return `export ${job.jobId}: ${job.status}${pages}, ${formatElapsed(elapsedMs)}`;
}

/**
 * Plain (non-TTY) output prints a line when this changes: per status and per 10 %, or, for a job
 * that reports no progress (the current API revision never does), per minute elapsed.
 */
function progressKey(job: ExportStatus, elapsedMs: number): string {
  const step =
    job.progress === undefined ? `${Math.floor(elapsedMs / 60_000)}m` : Math.floor(job.progress / 10);
  return `${job.status}:${step}`;
}

async function runExport(flags: ExportFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const target = await exportTarget(flags, ctx);
  const logger = cliLogger(ctx);
  const { checkValuesPath, valuesYaml, writeValuesFile } = await import('../values.ts');
  if (flags.valuesOut !== undefined) await checkValuesPath(flags.valuesOut);
  // Before starting an export: a refused --out would waste it.
  if (flags.out !== undefined) await checkDestination('--out', flags.out, flags.force);
  const client = await apiClient(flags, ctx, logger);
  const [
    { describeTarget, isExportFinished, jobOfTarget, startMayHaveCreatedJob },
    { fetchBundle, linkArrivedExpired, linkDestinationsFor },
  ] = await Promise.all([import('../../api/index.ts'), import('../../bundle/index.ts')]);
  const site = describeTarget(target);
  // Without --out the bundle is still downloaded and extracted: that verifies it and yields its version.
  const scratch = flags.out === undefined ? await mkdtemp(join(tmpdir(), 'static-export-')) : undefined;
  try {
    let busyMs = 0;
    const started = await startWhenFree(() => client.startExport(target), {
      timeoutMs: flags.timeout,
      what: site,
      onBusy: (delayMs) => {
        busyMs += delayMs;
        out.event('busy', { ...target, retryInMs: delayMs });
        out.info(
          `${site} already has an export queued or running (409): starting again in ${formatElapsed(delayMs)} ` +
            `(waiting at most --timeout ${formatDuration(flags.timeout)})`,
        );
      },
    }).catch((error: unknown) => {
      throw startMayHaveCreatedJob(error) ? startMayHaveCreated(site, error as AdminApiError) : error;
    });
    const startedAt = Date.now();
    const jobId = started.jobId;
    const ref = jobOfTarget(target, jobId);
    out.event('started', { jobId, ...target });
    out.info(`Started export ${jobId} of ${site}`);

    const job = await pollUntil(() => client.getExport(ref), isExportFinished, {
      delayMs:
        flags.pollInterval === undefined
          ? exportScheduleDelay(Date.now(), flags.expectedDuration)
          : fixedDelay(flags.pollInterval),
      // --timeout bounds the whole wait, a wait for another export to end included.
      timeoutMs: Math.max(0, flags.timeout - busyMs),
      what: `export ${jobId}`,
      onUpdate: (status, elapsedMs) => {
        out.event('progress', {
          jobId,
          status: status.status,
          progress: status.progress,
          pageCount: status.pageCount,
          elapsedMs,
        });
        // A finished job's line is the one after the wait, with the platform's duration: the
        // time this wait took is another figure for the same job.
        if (isExportFinished(status)) return;
        out.progress({
          key: progressKey(status, elapsedMs),
          ...(status.progress === undefined ? {} : { percent: status.progress }),
          text: describeStatus(status, elapsedMs),
        });
      },
    });
    if (job.status !== 'completed') {
      throw new CliError(
        EXIT.jobFailed,
        `export ${jobId} failed: ${job.error ?? 'the service gave no reason'}`,
      );
    }
    const tookMs = completedDurationMs(job, startedAt, Date.now());
    out.event('completed', { jobId, durationMs: tookMs });
    out.info(
      `Export ${jobId} completed in ${inSeconds(tookMs)}${job.pageCount === undefined ? '' : ` (${job.pageCount} pages)`}`,
    );

    // A link the platform hands out dead (the operator's rule) is never written.
    const live = (link: GeneratedBundle): GeneratedBundle => {
      if (!linkArrivedExpired(link.expiresAt, Date.now())) return link;
      throw new CliError(
        EXIT.bundle,
        `the platform handed out a bundle link for export ${jobId} that expires at ${link.expiresAt.toISOString()}, ` +
          `already expired (or within two seconds) when it arrived at ${new Date().toISOString()}: nothing was written. ` +
          "Ask for it again later; if this repeats, check this machine's clock (NTP).",
      );
    };
    let bundle = live(await client.exportLink(ref));
    // Where the platform's link may lead: the API's own host, public addresses, or anything with the opt-in.
    const destinations = linkDestinationsFor(client.baseUrl, flags.allowPrivateBundleLinks === true);
    out.event('bundle', { jobId, sizeBytes: bundle.sizeBytes, expiresAt: bundle.expiresAt.toISOString() });
    const dest = flags.out ?? join(scratch as string, 'site');
    const fetched = await fetchBundle({
      url: bundle.bundleUrl,
      dest,
      ...(flags.force ? { force: true } : {}),
      ...bundleDownload(flags, { deadlineMs: flags.downloadTimeout, destinations }, logger, out),
      ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
      // The link may expire while a large bundle downloads: a fresh one reuses the same export.
      renewUrl: async () => {
        bundle = live(await client.exportLink(ref));
        return bundle.bundleUrl;
      },
      gate: siteGate(flags, flags.out),
    });
    out.event('fetched', {
      version: fetched.version,
      sha256: fetched.sha256,
      sizeBytes: fetched.sizeBytes,
      files: fetched.files,
      pages: fetched.site.pages,
      ...(flags.out === undefined ? {} : { path: fetched.path }),
    });
    out.info(
      `Bundle verified: version ${fetched.version}, ${fetched.files} files, ${fetched.site.pages} pages, ${formatBytes(fetched.sizeBytes)}`,
    );
    if (flags.out !== undefined) out.info(`Extracted into ${fetched.path}`);

    const yaml = valuesYaml({
      bundleUrl: bundle.bundleUrl,
      version: fetched.version,
      expiresAt: bundle.expiresAt,
    });
    if (flags.valuesOut !== undefined) {
      await writeValuesFile(flags.valuesOut, yaml);
      out.event('values', { file: flags.valuesOut });
      out.info(`Values written to ${flags.valuesOut} (it holds the bundle link: keep it private)`);
    } else if (out.mode === 'json') {
      out.resultEvent('values', {
        staticExport: { enabled: true, bundleUrl: bundle.bundleUrl, version: fetched.version },
      });
    } else {
      out.result(yaml);
    }
    out.event('done', { jobId, version: fetched.version });
  } finally {
    await client.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

export function registerExport(program: Command, ctx: CliContext): void {
  const command = program
    .command('export')
    .summary('export a docs site, verify the bundle and write Helm values')
    .description(
      'Start a static export of --domain or --project-id (exactly one: the API revision follows), poll it ' +
        '(progress bar on a terminal, plain lines otherwise, JSON lines with --json), get the bundle link, ' +
        'download and verify the bundle, check the site (index.html at its root, at least --min-pages pages; a ' +
        'refused site changes nothing), extract it into --out, and write the staticExport values block (enabled, ' +
        'bundleUrl, version) for `helm upgrade -f`. The values go to --values-out, else to stdout (progress goes ' +
        'to stderr). With --project-id, an export of the project already queued or running (409) is waited out ' +
        'by starting again with a backoff from 3 s up to a minute, within --timeout; the hourly start limit ' +
        '(429) exits 8 at once, writing nothing.',
    );
  apiOptions(exportTargetOptions(command))
    .option(
      '--out <dir>',
      'extract the site into this directory (replaced as a whole; new, empty or extracted by static-export before)',
    )
    .option('--force', 'replace --out even if it holds files static-export did not put there')
    .option(ALLOW_PRIVATE_FLAG, ALLOW_PRIVATE_HELP);
  siteGateOptions(command, '--out')
    .option('--values-out <file>', 'write the values YAML to this file (mode 0600) instead of stdout')
    .option('--json', 'JSON lines on stdout instead of human output')
    .addOption(
      durationOption(
        ctx,
        '--poll-interval <duration>',
        'poll the status at this fixed interval instead of by progress (by default: sparse while far from the end ' +
          'that progress points to, at that end, and at least once a minute; the platform allows about 100 admin ' +
          'requests per key and minute)',
        { min: '100ms', legacyUnit: 'ms' },
      ),
    )
    .addOption(
      durationOption(
        ctx,
        '--expected-duration <duration>',
        "how long this site's exports take (e.g. 2m30s, as the last run printed): the first look comes then, not " +
          'after backing off from the start',
        { min: '1s' },
      ),
    )
    .addOption(
      waitTimeoutOption(
        ctx,
        'give up waiting for the export job after this long, a wait for another export of the project included (the download has --download-timeout)',
      ),
    )
    .addOption(downloadTimeoutOption(ctx, '--download-timeout'));
  bundleLimitOptions(command)
    .addHelpText('after', `${API_ENV_HELP}\n${PROJECT_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: ExportFlags) => runExport(flags, ctx));
}
