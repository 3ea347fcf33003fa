import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BARE_HOST_RULE, isBareHost } from '../domain.ts';
import type { Logger } from '../log.ts';
import { type DownloadOptions, downloadToFile } from './download.ts';
import { BundleError } from './errors.ts';
import { stageExtraction } from './extract.ts';
import { type BundleLimits, resolveLimits } from './limits.ts';

// Layout, for carrying into air-gapped sites (never holds a link: links are credentials and expire):
//   <dir>/<domain>/index.json                  { domain, latest, versions: [...] }
//   <dir>/<domain>/<version>/bundle.tar.gz
//   <dir>/<domain>/<version>/manifest.json     { domain, version, sha256, sizeBytes, files, fetchedAt }

export interface MirrorManifest {
  domain: string;
  version: string;
  /** Hex sha256 of bundle.tar.gz. */
  sha256: string;
  sizeBytes: number;
  files: number;
  /** ISO timestamp. */
  fetchedAt: string;
}

export interface MirrorIndex {
  domain: string;
  latest: string;
  /** Oldest first. */
  versions: MirrorManifest[];
}

export interface MirrorOptions {
  url: string;
  /** Mirror root directory. */
  dir: string;
  domain: string;
  expectedSize?: number;
  renewUrl?: () => Promise<string>;
  limits?: Partial<BundleLimits>;
  logger?: Logger;
  now?: () => Date;
  /** Download tuning: retries, backoff, idle timeout, overall deadline. */
  download?: Pick<DownloadOptions, 'retries' | 'maxRenewals' | 'backoffMs' | 'timeoutMs' | 'deadlineMs'>;
}

export interface MirroredBundle extends MirrorManifest {
  /** Absolute path of the archive in the mirror. */
  archivePath: string;
}

async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, path);
}

export async function readMirrorIndex(dir: string, domain: string): Promise<MirrorIndex | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, domain, 'index.json'), 'utf8')) as MirrorIndex;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Downloads the bundle into the mirror, proves it extracts safely (and learns its content version
 * that way), files it under that version and records it in the domain's index as the latest.
 */
export async function mirrorBundle(options: MirrorOptions): Promise<MirroredBundle> {
  if (!isBareHost(options.domain)) {
    // The domain becomes a directory name: a bare host cannot climb out of the mirror root.
    throw new BundleError('Io', `mirror domain must be ${BARE_HOST_RULE}, got "${options.domain}"`);
  }
  const limits = resolveLimits(options.limits);
  const domainDir = join(options.dir, options.domain);
  await mkdir(domainDir, { recursive: true });
  const suffix = randomBytes(4).toString('hex');
  const incoming = join(domainDir, `.incoming-${suffix}.tar.gz`);
  try {
    const download = await downloadToFile({
      ...options.download,
      url: options.url,
      path: incoming,
      maxBytes: limits.maxArchiveBytes,
      ...(options.expectedSize === undefined ? {} : { expectedSize: options.expectedSize }),
      ...(options.renewUrl ? { renewUrl: options.renewUrl } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const staged = await stageExtraction(createReadStream(incoming), join(domainDir, `.verify-${suffix}`), {
      limits,
    });
    await staged.discard();

    const manifest: MirrorManifest = {
      domain: options.domain,
      version: staged.version,
      sha256: download.sha256,
      sizeBytes: download.sizeBytes,
      files: staged.files,
      fetchedAt: (options.now?.() ?? new Date()).toISOString(),
    };
    const versionDir = join(domainDir, staged.version);
    await mkdir(versionDir, { recursive: true });
    const archivePath = join(versionDir, 'bundle.tar.gz');
    await rename(incoming, archivePath);
    await writeJsonAtomic(join(versionDir, 'manifest.json'), manifest);

    const previous = await readMirrorIndex(options.dir, options.domain);
    const index: MirrorIndex = {
      domain: options.domain,
      latest: manifest.version,
      versions: [...(previous?.versions ?? []).filter((v) => v.version !== manifest.version), manifest],
    };
    await writeJsonAtomic(join(domainDir, 'index.json'), index);
    options.logger?.info({ version: manifest.version, sizeBytes: manifest.sizeBytes }, 'bundle mirrored');
    return { ...manifest, archivePath };
  } finally {
    await rm(incoming, { force: true });
  }
}
