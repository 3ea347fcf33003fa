import type { Logger } from '../log.ts';
import { type DownloadOptions, openDownload } from './download.ts';
import { assertVersion, inspectArchive, stageExtraction } from './extract.ts';
import { type BundleLimits, resolveLimits } from './limits.ts';
import type { SiteSummary } from './site-check.ts';

export interface FetchBundleOptions {
  /** Presigned `bundleUrl` (or a `file:` URL of a mirrored archive). */
  url: string;
  /**
   * Directory that ends up holding the site; replaced as a whole, never left half-written.
   * Without it the bundle is verified only and nothing is extracted (the operator's cache).
   */
  dest?: string;
  /** Replace `dest` even when it holds content this tool did not extract there. */
  force?: boolean;
  /** `sizeBytes` from generate-bundle when known. */
  expectedSize?: number;
  /** Refuse content whose version differs (pinned `staticExport.version`). */
  expectVersion?: string;
  /** Archive digest to insist on (mirror manifests carry it). */
  expectSha256?: string;
  /** Fresh link when the current one expired mid-download (the operator and CLI call generate-bundle). */
  renewUrl?: () => Promise<string>;
  limits?: Partial<BundleLimits>;
  logger?: Logger;
  signal?: AbortSignal;
  onProgress?: DownloadOptions['onProgress'];
  /** Checks the extracted site before it replaces `dest`; throwing leaves `dest` untouched. */
  gate?: (site: SiteSummary) => void | Promise<void>;
  /** Download tuning: retries, backoff, idle timeout, overall deadline; where a link may lead. */
  download?: Pick<
    DownloadOptions,
    'retries' | 'maxRenewals' | 'backoffMs' | 'timeoutMs' | 'deadlineMs' | 'destinations'
  >;
}

export interface FetchedBundle {
  /** Content version, `sha256-<hex>`. */
  version: string;
  /** Hex sha256 of the archive bytes. */
  sha256: string;
  sizeBytes: number;
  files: number;
  /** Pages and root index of the extracted site (what publish gates check). */
  site: SiteSummary;
  /** Absolute path of the destination (absent when only verified). */
  path?: string;
}

/**
 * The one pipeline the CLI and the operator share: download (resumable, renewable) straight into
 * safe extraction, then verify size, digest and version before the content replaces `dest`.
 */
export function fetchBundle(
  options: FetchBundleOptions & { dest: string },
): Promise<FetchedBundle & { path: string }>;
export function fetchBundle(options: FetchBundleOptions): Promise<FetchedBundle>;
export async function fetchBundle(options: FetchBundleOptions): Promise<FetchedBundle> {
  const limits = resolveLimits(options.limits);
  const { body, done } = openDownload({
    ...options.download,
    url: options.url,
    maxBytes: limits.maxArchiveBytes,
    ...(options.expectedSize === undefined ? {} : { expectedSize: options.expectedSize }),
    ...(options.expectSha256 === undefined ? {} : { expectSha256: options.expectSha256 }),
    ...(options.renewUrl ? { renewUrl: options.renewUrl } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  // A download failure reaches the extraction as its source's error and is rethrown as is.
  const staged =
    options.dest === undefined
      ? {
          ...(await inspectArchive(body, { limits })),
          commit: async () => undefined,
          discard: async () => {},
        }
      : await stageExtraction(body, options.dest, { limits, ...(options.force ? { force: true } : {}) });
  try {
    const download = await done;
    assertVersion(staged.version, options.expectVersion);
    const { site } = staged;
    await options.gate?.(site);
    const path = await staged.commit();
    options.logger?.info(
      {
        version: staged.version,
        files: staged.files,
        pages: site.pages,
        sizeBytes: download.sizeBytes,
        attempts: download.attempts,
      },
      'bundle fetched',
    );
    return {
      version: staged.version,
      sha256: download.sha256,
      sizeBytes: download.sizeBytes,
      files: staged.files,
      site,
      ...(path === undefined ? {} : { path }),
    };
  } catch (error) {
    await staged.discard();
    throw error;
  }
}
