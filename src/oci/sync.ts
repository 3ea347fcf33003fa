// `mirror sync`: many sites from the platform into a registry. Per site: start an export, poll
// it, generate the bundle link, download, verify and extract (the one bundle pipeline), package,
// then push unless the repository has that version already (found by its version tag, so an
// unchanged site costs no blob upload), move the followed tags, prune beyond the newest N.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  describeTarget,
  type ExportJobRef,
  type ExportTarget,
  exportTargetOf,
  type GeneratedBundle,
  jobOfTarget,
  slugOf,
} from '../api/index.ts';
import { type ExportObservations, nextPollDelayMs, observe } from '../api/poll-schedule.ts';
import { ExportBasePathSchema, type ExportJob, ProjectIdSchema, type StartedExport } from '../api/schemas.ts';
import { fetchBundle } from '../bundle/fetch.ts';
import type { BundleLimits } from '../bundle/limits.ts';
import type { LinkDestinations } from '../bundle/link-destination.ts';
import { BARE_HOST_RULE, isBareHost } from '../domain.ts';
import { wait } from '../timers.ts';
import { OciError } from './errors.ts';
import type { PushImageOptions, SiteMetadata } from './image.ts';
import { type PublishResult, packageSite, pruneVersions, publishSite } from './publish.ts';
import { isTag, OCI_REFERENCE_HELP, type OciReference, parseOciReference } from './reference.ts';
import type { RegistryClient } from './registry.ts';

const domainSchema = z.string().refine(isBareHost, { message: `must be ${BARE_HOST_RULE}` });
const referenceSchema = z
  .string()
  .refine((v) => v.startsWith('oci://'), { message: `must be ${OCI_REFERENCE_HELP}` });
const tagSchema = z
  .string()
  .refine(isTag, { message: 'must be a tag: letters, digits, _ . - (up to 128)' })
  .refine((t) => !/^sha256-[0-9a-f]{64}$/.test(t), { message: 'version tags are set by static-export' });

const REVISIONS = "domain (the contract's API revision) or projectId (the current one)";

/** A site named by its domain or, for the current API revision, its project (and base path). */
const siteSchema = z
  .strictObject({
    domain: domainSchema.optional(),
    projectId: ProjectIdSchema.optional(),
    basePath: ExportBasePathSchema.optional(),
    repository: referenceSchema.optional(),
  })
  .superRefine((site, ctx) => {
    if ((site.domain === undefined) === (site.projectId === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: `${site.domain === undefined ? 'names no site' : 'names both domain and projectId'}: give exactly one, ${REVISIONS}`,
      });
    } else if (site.basePath !== undefined && site.domain !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['basePath'],
        message: "applies to a projectId only: the contract's API revision (domain) has no base path",
      });
    }
  });

const SyncConfigSchema = z.strictObject({
  /** Admin API base URL (else --api-url or the environment). The key never goes here. */
  apiUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Repository prefix: each domain goes to `<target>/<domain>` unless it names its own repository. */
  target: referenceSchema,
  /** Moving tags pointed at each domain's newest version. */
  tags: z.array(tagSchema).default(['latest']),
  /** Keep the newest N versions per domain and delete the rest (unset: keep everything). */
  keep: z.int().min(1).optional(),
  /** Domains worked on at once. */
  concurrency: z.int().min(1).max(64).default(4),
  domains: z.array(z.union([domainSchema, siteSchema])).min(1),
});
type SyncConfig = z.infer<typeof SyncConfigSchema>;

/** What a site is exported as; what it names picks the API revision. */
export type SyncSite = ExportTarget;

/** What names the site in its image (domain, project id): the target without its export options. */
function siteNames(site: SyncSite): Pick<SiteMetadata, 'domain' | 'projectId'> {
  return Object.fromEntries(
    Object.entries(site).filter(([key]) => key === 'domain' || key === 'projectId'),
  ) as Pick<SiteMetadata, 'domain' | 'projectId'>;
}

export interface SyncTarget {
  site: SyncSite;
  /** How messages name it. */
  name: string;
  reference: OciReference;
}

/**
 * A site is a string or an object: of a union's failure, the issue of the branch the entry's type
 * chose (a bad basePath, not "Invalid input").
 */
function chosenBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const branch = issue.errors.find((e) => !(e[0]?.code === 'invalid_type' && e[0].path.length === 0));
  const inner = branch?.[0];
  return inner ? { ...inner, path: [...issue.path, ...inner.path] } : issue;
}

/** Parses and checks a mirror.yaml; messages name the field and the file. */
export function parseSyncConfig(text: string, file: string): { config: SyncConfig; targets: SyncTarget[] } {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new OciError('Usage', `${file} is not valid YAML: ${(error as Error).message}`);
  }
  const parsed = SyncConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] && chosenBranch(parsed.error.issues[0]);
    const where = issue?.path.length ? issue.path.join('.') : '(top level)';
    throw new OciError('Usage', `${file}: ${where} ${issue?.message ?? 'is invalid'}`);
  }
  const config = parsed.data;
  const base = parseOciReference(config.target, `${file}: target`);
  if (base.tag || base.digest)
    throw new OciError('Usage', `${file}: target must be a repository prefix, without :tag or @digest`);
  const targets = config.domains.map((entry, i): SyncTarget => {
    const fields = typeof entry === 'string' ? { domain: entry } : entry;
    // Named by the same fields as a StaticExportRelease's spec, and read the same way.
    const site: SyncSite = exportTargetOf(fields) ?? { domain: '' };
    const name = describeTarget(site);
    if (typeof entry !== 'string' && entry.repository) {
      const reference = parseOciReference(entry.repository, `${file}: domains.${i}.repository`);
      if (reference.tag || reference.digest) {
        throw new OciError('Usage', `${file}: domains.${i}.repository must not carry a tag or digest`);
      }
      return { site, name, reference };
    }
    return {
      site,
      name,
      reference: { registry: base.registry, repository: `${base.repository}/${slugOf(site)}` },
    };
  });
  const seen = new Map<string, string>();
  for (const t of targets) {
    if (seen.has(t.name)) {
      throw new OciError('Usage', `${file}: ${'domain' in t.site ? 'domain ' : ''}${t.name} is listed twice`);
    }
    const repository = `${t.reference.registry}/${t.reference.repository}`;
    const other = [...seen].find(([, r]) => r === repository)?.[0];
    // One project under two base paths: its default repository would hold both sites' versions.
    if (other !== undefined && !('domain' in t.site)) {
      throw new OciError(
        'Usage',
        `${file}: ${other} and ${t.name} would both go to ${repository}: give one of them its own repository`,
      );
    }
    seen.set(t.name, repository);
  }
  return { config, targets };
}

/** What sync needs of the admin API client (AdminApiClient has it). */
interface ExportApi {
  startExport(site: SyncSite): Promise<StartedExport>;
  getExport(job: ExportJobRef): Promise<ExportJob>;
  exportLink(job: ExportJobRef): Promise<GeneratedBundle>;
}

type SyncStep =
  | { event: 'started'; jobId: string }
  | { event: 'exporting'; jobId: string; status: string; progress?: number }
  | { event: 'downloading'; received: number; total?: number }
  | { event: 'fetched'; version: string; files: number; pages: number }
  | ({ event: 'pushed' | 'unchanged'; reference: string } & Omit<PublishResult, 'blobs'> & {
        uploaded: number;
      })
  | { event: 'pruned'; tags: string[] }
  | { event: 'failed'; error: unknown };

/** Each event carries its site's fields (SyncSite): `domain`, or `projectId` and `basePath`. */
export type SyncEvent = SyncSite & SyncStep;

export interface DomainResult {
  target: SyncTarget;
  ok: boolean;
  version?: string;
  digest?: string;
  pushed?: boolean;
  uploaded?: number;
  pruned?: number;
  error?: unknown;
}

interface SyncOptions {
  api: ExportApi;
  /** The client for a registry host (one per host, reused across domains). */
  registry: (registryHost: string) => Promise<RegistryClient>;
  targets: SyncTarget[];
  tags: string[];
  keep?: number;
  concurrency: number;
  /** Status polls at this fixed interval; absent: by the operator's poll schedule (progress-aware). */
  pollIntervalMs?: number;
  /** Per domain: export plus download. */
  timeoutMs: number;
  limits?: Partial<BundleLimits>;
  downloadDeadlineMs?: number;
  /** Where the platform's bundle links may lead (src/bundle/link-destination.ts); absent: anywhere. */
  destinations?: LinkDestinations;
  afterManifest?: PushImageOptions['afterManifest'];
  /**
   * Starts a site's export (default: `api.startExport`): the caller's say over starts, which the
   * current revision limits per hour. What it throws fails that site only.
   */
  start?: (target: SyncTarget) => Promise<StartedExport>;
  onEvent?: (event: SyncEvent, target: SyncTarget) => void;
}

async function syncDomain(target: SyncTarget, options: SyncOptions): Promise<DomainResult> {
  const { site, name } = target;
  const emit = (step: SyncStep) => options.onEvent?.({ ...site, ...step }, target);
  const deadline = Date.now() + options.timeoutMs;
  const started = await (options.start ?? ((t: SyncTarget) => options.api.startExport(t.site)))(target);
  const ref = jobOfTarget(site, started.jobId);
  emit({ event: 'started', jobId: started.jobId });
  let seen: ExportObservations = { startedAt: Date.now() };
  let job: ExportJob;
  for (;;) {
    const delay = options.pollIntervalMs ?? nextPollDelayMs(seen, Date.now()) ?? 0;
    // The last look comes at the deadline however far apart the schedule puts them.
    await wait(Math.max(0, Math.min(delay, deadline - Date.now())));
    job = await options.api.getExport(ref);
    seen = observe(seen, { state: job.status, progress: job.progress }, Date.now());
    emit({
      event: 'exporting',
      jobId: started.jobId,
      status: job.status,
      ...(job.progress === undefined ? {} : { progress: job.progress }),
    });
    if (job.status === 'completed') break;
    if (job.status === 'failed') {
      throw new SyncExportFailed(
        `export ${started.jobId} of ${name} failed: ${job.error ?? 'no reason given'}`,
      );
    }
    if (Date.now() >= deadline) {
      throw new OciError('Unavailable', `export ${started.jobId} of ${name} did not finish in time`);
    }
  }
  let bundle = await options.api.exportLink(ref);
  const scratch = await mkdtemp(join(tmpdir(), 'static-export-sync-'));
  try {
    const fetched = await fetchBundle({
      url: bundle.bundleUrl,
      dest: join(scratch, 'site'),
      ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
      ...(options.limits ? { limits: options.limits } : {}),
      download: {
        deadlineMs: Math.max(1000, options.downloadDeadlineMs ?? deadline - Date.now()),
        ...(options.destinations ? { destinations: options.destinations } : {}),
      },
      renewUrl: async () => {
        bundle = await options.api.exportLink(ref);
        return bundle.bundleUrl;
      },
      onProgress: (received, total) =>
        emit({ event: 'downloading', received, ...(total === undefined ? {} : { total }) }),
    });
    emit({
      event: 'fetched',
      version: fetched.version,
      files: fetched.files,
      pages: fetched.site.pages,
    });
    const created = [job.updatedAt, job.createdAt].find((t) => t && !Number.isNaN(Date.parse(t)));
    // Packaged only when the registry lacks this version: an unchanged site is never re-read.
    const image = async () =>
      (
        await packageSite(
          fetched.path,
          {
            ...siteNames(site),
            exportJobId: started.jobId,
            created: created ? new Date(created).toISOString() : new Date().toISOString(),
          },
          { version: fetched.version, pages: fetched.site.pages },
        )
      ).image;
    const built = { version: fetched.version, image };
    const client = await options.registry(target.reference.registry);
    const repository = target.reference.repository;
    const result = await publishSite(client, repository, built, {
      tags: options.tags,
      ...(options.afterManifest ? { afterManifest: options.afterManifest } : {}),
    });
    const uploaded = result.blobs.filter((b) => b.outcome === 'uploaded').length;
    const { blobs: _blobs, ...summary } = result;
    emit({
      event: result.pushed ? 'pushed' : 'unchanged',
      reference: `oci://${target.reference.registry}/${repository}@${result.digest}`,
      ...summary,
      uploaded,
    });
    let pruned = 0;
    if (options.keep !== undefined) {
      const removed = await pruneVersions(client, repository, options.keep, {
        movingTags: options.tags,
        protect: [result.digest],
      });
      pruned = removed.length;
      if (pruned > 0) emit({ event: 'pruned', tags: removed.map((r) => r.tag) });
    }
    return {
      target,
      ok: true,
      version: result.version,
      digest: result.digest,
      pushed: result.pushed,
      uploaded,
      pruned,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A failed export job (the CLI's exit 4). */
export class SyncExportFailed extends Error {
  override readonly name = 'SyncExportFailed';
}

/** Syncs every target, `concurrency` at a time; one site's failure does not stop the others. */
export async function syncDomains(options: SyncOptions): Promise<DomainResult[]> {
  const results: DomainResult[] = new Array(options.targets.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.targets.length) {
      const index = next++;
      const target = options.targets[index] as SyncTarget;
      try {
        results[index] = await syncDomain(target, options);
      } catch (error) {
        options.onEvent?.({ ...target.site, event: 'failed', error }, target);
        results[index] = { target, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, options.targets.length) }, worker));
  return results;
}
