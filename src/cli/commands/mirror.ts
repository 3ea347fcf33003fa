import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { StagedSite } from '../../oci/bundle-layer.ts';
import {
  type BundleLimitFlags,
  bundleDownload,
  bundleLimitOptions,
  downloadTimeoutOption,
} from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, checkDomain, cliLogger, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import {
  REGISTRY_ENV_HELP,
  type RegistryFlags,
  registryClientFor,
  registryOptions,
} from '../registry-options.ts';
import { reportSigned, type SigningFlags, signingHook, signingOptions } from '../signing.ts';
import {
  bundleSource,
  type PreparedSite,
  preparedSite,
  type SiteSourceFlags,
  siteSourceOptions,
  stagedSite,
} from '../site-source.ts';
import { registerMirrorSync } from './mirror-sync.ts';

interface MirrorFlags extends BundleLimitFlags {
  url?: string;
  dir?: string;
  domain?: string;
  expectedSize?: number;
  timeout: number;
  json?: boolean;
}

async function runMirror(flags: MirrorFlags, ctx: CliContext): Promise<void> {
  if (flags.dir === undefined || flags.domain === undefined) {
    throw usageError(
      'mirror needs --dir and --domain to file a bundle into a mirror directory, or a subcommand: ' +
        'push, save, load or sync (see `static-export mirror --help`).',
    );
  }
  const out = new Reporter(ctx, flags.json === true);
  const url = bundleUrlFrom(flags.url, ctx);
  const { mirrorBundle } = await import('../../bundle/index.ts');
  const mirrored = await mirrorBundle({
    url,
    dir: flags.dir,
    domain: flags.domain,
    ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    ...bundleDownload(flags, { deadlineMs: flags.timeout }, cliLogger(ctx)),
  });
  out.event('mirrored', { ...mirrored });
  out.info(
    `Mirrored version ${mirrored.version} (${formatBytes(mirrored.sizeBytes)}) to ${mirrored.archivePath}`,
  );
}

function tagArg(value: string, previous: string[] = []): string[] {
  if (!/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/.test(value)) {
    throw new InvalidArgumentError(
      'expected a tag: letters, digits, _ . - (up to 128, not starting with . or -).',
    );
  }
  if (/^sha256-[0-9a-f]{64}$/.test(value)) {
    throw new InvalidArgumentError(
      'version tags are set by static-export; choose a moving tag such as latest.',
    );
  }
  return [...previous, value];
}

interface PushFlags extends SiteSourceFlags, RegistryFlags, SigningFlags {
  to: string;
  tag?: string[];
  keep?: number;
}

async function runPush(flags: PushFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const { parseOciReference, publishSite, pruneVersions, formatOciReference } = await import(
    '../../oci/index.ts'
  );
  const target = parseOciReference(flags.to, '--to');
  if (target.tag || target.digest) {
    throw usageError('--to names a repository (oci://registry/repository); give moving tags with --tag.');
  }
  const hook = await signingHook(flags, (signed) => reportSigned(out, signed));
  const url = await bundleSource(flags, ctx);
  const fetching = bundleDownload(flags, { deadlineMs: flags.timeout }, cliLogger(ctx), out);
  const client = await registryClientFor(target, flags, ctx);
  let staged: StagedSite | undefined;
  let prepared: PreparedSite | undefined;
  try {
    staged = await stagedSite(url, flags, fetching, client, target.repository);
    // Streamed, the layer is up before its version is known (a digest over the content). Read
    // first (--site, a bundle out of order), the site is packaged only if the registry lacks it.
    if (!staged) prepared = await preparedSite(flags, url, fetching, out);
    const ready = prepared;
    const source = ready
      ? { version: ready.version, image: async () => (await ready.packaged()).image }
      : (staged as StagedSite);
    const result = await publishSite(client, target.repository, source, {
      tags: flags.tag ?? [],
      ...(hook ? { afterManifest: hook } : {}),
    });
    const pruned =
      flags.keep === undefined
        ? []
        : await pruneVersions(client, target.repository, flags.keep, {
            movingTags: flags.tag ?? [],
            protect: [result.digest],
          });
    const reference = formatOciReference({ ...target, digest: result.digest });
    out.event('pushed', {
      reference,
      ...result,
      uploaded: result.blobs.filter((b) => b.outcome === 'uploaded').length,
      pruned: pruned.map((p) => p.tag),
    });
    const site = result.pushed ? (staged ?? (await ready?.packaged())) : undefined;
    out.info(
      site
        ? `Pushed version ${site.version} (${site.files} files, ${formatBytes(site.image.layer.size)} layer) as ${reference}`
        : `Version ${result.version} is already in ${formatOciReference(target)} (${result.digest}): nothing pushed`,
    );
    if (result.moved.length > 0) out.info(`Tagged ${result.moved.join(', ')}`);
    if (pruned.length > 0)
      out.info(`Pruned ${pruned.length} old version(s): ${pruned.map((p) => p.tag).join(', ')}`);
  } finally {
    // A version the repository had already: its streamed layer is not kept.
    await staged?.release();
    await client.close();
    await prepared?.cleanup();
  }
}

interface SaveFlags extends SiteSourceFlags {
  to: string;
}

async function runSave(flags: SaveFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const { saveLayoutArchive, versionTag } = await import('../../oci/index.ts');
  const url = await bundleSource(flags, ctx);
  const fetching = bundleDownload(flags, { deadlineMs: flags.timeout }, cliLogger(ctx), out);
  const prepared = await preparedSite(flags, url, fetching, out);
  try {
    const site = await prepared.packaged();
    await saveLayoutArchive(flags.to, site.image, versionTag(site.version));
    out.event('saved', {
      path: resolve(flags.to),
      version: site.version,
      digest: site.image.manifestDigest,
      sizeBytes: (await stat(flags.to)).size,
    });
    out.info(`Saved version ${site.version} (${site.image.manifestDigest}) to ${flags.to}`);
  } finally {
    await prepared.cleanup();
  }
}

interface LoadFlags extends RegistryFlags, SigningFlags {
  to: string;
  tag?: string[];
  json?: boolean;
}

async function runLoad(archive: string, flags: LoadFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const { parseOciReference, readLayoutArchive, pushImage, formatOciReference, ANNOTATIONS, isTag } =
    await import('../../oci/index.ts');
  const target = parseOciReference(flags.to, '--to');
  if (target.digest) throw usageError('--to names a repository, optionally with :TAG, not a digest.');
  const hook = await signingHook(flags, (signed) => reportSigned(out, signed));
  const images = await readLayoutArchive(archive);
  if (images.length > 1 && (target.tag || flags.tag)) {
    throw usageError(
      `${archive} holds ${images.length} images: tags given with --to or --tag would point at each in turn.`,
    );
  }
  const client = await registryClientFor(target, flags, ctx);
  try {
    for (const image of images) {
      const version = image.annotations[ANNOTATIONS.version];
      const tags = [
        ...new Set(
          [version, image.refName, target.tag, ...(flags.tag ?? [])].filter(
            (t): t is string => t !== undefined && isTag(t),
          ),
        ),
      ];
      if (tags.length === 0) {
        throw usageError(
          `${archive}: image ${image.manifestDigest} has no tag in the archive: give one with --tag.`,
        );
      }
      const pushed = await pushImage(
        client,
        target.repository,
        image,
        tags,
        hook ? { afterManifest: hook } : {},
      );
      const reference = formatOciReference({
        registry: target.registry,
        repository: target.repository,
        digest: pushed.digest,
      });
      out.event('loaded', {
        reference,
        digest: pushed.digest,
        tags,
        uploaded: pushed.blobs.filter((b) => b.outcome === 'uploaded').length,
      });
      out.info(`Loaded ${image.manifestDigest} as ${reference} (tags ${tags.join(', ')})`);
    }
  } finally {
    await client.close();
  }
}

export function registerMirror(program: Command, ctx: CliContext): void {
  const command = program
    .command('mirror')
    // Options after a subcommand's name are the subcommand's (push has its own --url, --domain...).
    .enablePositionalOptions()
    .summary('carry site versions into air-gapped networks: a mirror directory or OCI images')
    .description(
      'Without a subcommand: download and verify a bundle, then file it as <dir>/<domain>/<version>/bundle.tar.gz ' +
        'with a manifest.json (version, sha256, size, fetchedAt; never the link) and update ' +
        '<dir>/<domain>/index.json. Subcommands make each site version an OCI image (one deterministic layer, ' +
        'annotated with the content version) that registries, skopeo and cosign carry: push, save, load, sync.',
    )
    .option('--url <url>', 'bundle link (http/https)')
    .option('--dir <dir>', 'mirror root directory')
    .option('--domain <host>', 'site the bundle belongs to, a bare host', checkDomain)
    .option('--expected-size <bytes>', 'refuse an archive of another size', integer(1))
    .addOption(downloadTimeoutOption(ctx, '--timeout'));
  bundleLimitOptions(command)
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: MirrorFlags) => runMirror(flags, ctx));

  const push = command
    .command('push')
    .summary('push a site version as an OCI image to a registry')
    .description(
      'Package a site version (from --url, --bundle or --site) as an OCI image and push it to --to under its ' +
        'version tag (the content version, sha256-<hex>) and any --tag. A version the repository already has ' +
        'is not pushed again (only moving tags are updated). With --keep N, older versions beyond the newest N ' +
        'are deleted (the registry must allow deletion).',
    )
    .requiredOption('--to <oci://registry/repository>', 'target repository');
  siteSourceOptions(push, ctx)
    .option('--tag <tag>', 'moving tag to point at this version, e.g. latest (repeatable)', tagArg)
    .option('--keep <n>', 'keep only the newest N versions in the repository', integer(1));
  signingOptions(registryOptions(push))
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: PushFlags) => runPush(flags, ctx));

  const save = command
    .command('save')
    .summary('write a site version as an OCI image layout archive (to carry on a disk)')
    .description(
      'Package a site version (from --url, --bundle or --site) into an OCI image layout archive, the format ' +
        '`skopeo copy oci-archive:FILE` reads; inside the gap, `static-export mirror load FILE --to oci://...` ' +
        'pushes it. The image is tagged with its version inside the archive.',
    )
    .requiredOption('--to <file>', 'archive to write (e.g. site.tar)');
  siteSourceOptions(save, ctx)
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: SaveFlags) => runSave(flags, ctx));

  const load = command
    .command('load')
    .summary('push the images of an OCI image layout archive to a registry')
    .description(
      'Push every image of an OCI layout archive (from `mirror save` or `skopeo copy ... oci-archive:FILE`) to ' +
        '--to, under its version tag, its tag in the archive, the tag of --to and any --tag. Blobs the ' +
        'repository has already are not uploaded again.',
    )
    .argument('<archive>', 'OCI image layout archive (.tar)')
    .requiredOption('--to <oci://registry/repository[:tag]>', 'target repository')
    .option('--tag <tag>', 'moving tag to point at the image, e.g. latest (repeatable)', tagArg);
  signingOptions(registryOptions(load))
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((archive: string, flags: LoadFlags) => runLoad(archive, flags, ctx));

  registerMirrorSync(command, ctx);
}
