// Client of the OCI distribution API (https://github.com/opencontainers/distribution-spec): what
// `mirror push/load/sync` need to write images and what a puller inside the gap needs to read
// them: manifests, blobs, tags. How requests travel (pool, retries, redirects, auth) is
// transport.ts; how blobs go up is blob-upload.ts. A read's `signal` aborts it, its body included.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { BlobUploads } from './blob-upload.ts';
import { type BlobSource, type Descriptor, digestOf, MEDIA_TYPES, type StagedUpload } from './content.ts';
import { OciError } from './errors.ts';
import { isDigest } from './reference.ts';
import {
  drain,
  header,
  RegistryTransport,
  type Response,
  readSmall,
  type TransportOptions,
} from './transport.ts';

const MANIFEST_ACCEPT = [
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerManifest,
  MEDIA_TYPES.dockerList,
].join(', ');

export type UploadOutcome = 'exists' | 'mounted' | 'uploaded';

export interface RegistryClientOptions extends TransportOptions {
  /** Blobs above this size go up in PATCH chunks of this size; smaller ones in one PUT. Default 64 MiB. */
  chunkSize?: number;
  /** Called for each blob request that moves bytes (uploads, mounts), e.g. to count them. */
  onBlobTransfer?: (event: { repository: string; digest: string; outcome: UploadOutcome }) => void;
}

const DEFAULT_CHUNK = 64 * 1024 * 1024;

/**
 * A blob's bytes, counted and hashed on the way: fails as soon as there are more than `size`, and
 * at the end (or when the connection closes early) when there were fewer or their digest is not
 * `digest`. A generator reads nothing until its reader asks, so no failure can come before
 * someone listens for it. An abort fails it with the signal's reason, not as a short blob.
 */
async function* verified(
  body: IncomingMessage,
  digest: string,
  size: number | undefined,
  what: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let received = 0;
  const mismatch = (why: string) => new OciError('ContentMismatch', `${what}: ${why}`);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (size !== undefined && received > size)
        throw mismatch(`the registry sent more than its ${size} bytes`);
      hash.update(chunk);
      yield chunk;
    }
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (error instanceof OciError || size === undefined || received >= size) throw error;
    throw mismatch(`the connection closed after ${received} of its ${size} bytes`);
  }
  if (size !== undefined && received < size)
    throw mismatch(`the registry sent ${received} of its ${size} bytes`);
  const actual = `sha256:${hash.digest('hex')}`;
  if (actual !== digest)
    throw mismatch(`the registry sent content with digest ${actual}, expected ${digest}`);
}

export class RegistryClient {
  readonly registry: string;
  readonly baseUrl: string;
  private readonly transport: RegistryTransport;
  private readonly uploads: BlobUploads;
  private readonly onBlobTransfer: RegistryClientOptions['onBlobTransfer'];

  constructor(options: RegistryClientOptions) {
    this.transport = new RegistryTransport(options);
    this.registry = this.transport.registry;
    this.baseUrl = this.transport.baseUrl;
    this.uploads = new BlobUploads(this.transport, options.chunkSize ?? DEFAULT_CHUNK);
    this.onBlobTransfer = options.onBlobTransfer;
  }

  async close(): Promise<void> {
    this.transport.close();
  }

  // ---- reading ----

  /** The manifest digest a tag (or digest) points to, or undefined when there is none. */
  async resolve(
    repository: string,
    reference: string,
    signal?: AbortSignal,
  ): Promise<Descriptor | undefined> {
    const res = await this.transport.call({
      method: 'HEAD',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull`],
      headers: { accept: MANIFEST_ACCEPT },
      expect: [200, 404],
      what: `resolve ${repository}:${reference}`,
      signal,
    });
    await drain(res.body);
    if (res.status === 404) return undefined;
    const digest = header(res, 'docker-content-digest');
    const mediaType = header(res, 'content-type') ?? MEDIA_TYPES.ociManifest;
    const size = Number(header(res, 'content-length') ?? Number.NaN);
    if (digest && isDigest(digest) && Number.isFinite(size)) return { mediaType, digest, size };
    // Not every registry sends the digest on HEAD: the content tells.
    const manifest = await this.getManifest(repository, reference, signal);
    return (
      manifest && { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.bytes.length }
    );
  }

  /** The manifest's bytes (exactly as stored: its digest is over them), or undefined when absent. */
  async getManifest(
    repository: string,
    reference: string,
    signal?: AbortSignal,
  ): Promise<{ bytes: Buffer; digest: string; mediaType: string } | undefined> {
    const res = await this.transport.call({
      method: 'GET',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull`],
      headers: { accept: MANIFEST_ACCEPT },
      expect: [200, 404],
      what: `get manifest ${repository}:${reference}`,
      signal,
    });
    if (res.status === 404) {
      await drain(res.body);
      return undefined;
    }
    const bytes = await readSmall(res.body);
    const digest = digestOf(bytes);
    if (isDigest(reference) && digest !== reference) {
      throw new OciError(
        'ContentMismatch',
        `get manifest ${repository}@${reference}: the registry sent another manifest (digest ${digest})`,
      );
    }
    let mediaType = header(res, 'content-type')?.split(';')[0]?.trim();
    if (!mediaType || mediaType === 'application/json') {
      try {
        mediaType = (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType;
      } catch {
        throw new OciError('Protocol', `manifest ${repository}:${reference} is not JSON`);
      }
    }
    return { bytes, digest, mediaType: mediaType ?? MEDIA_TYPES.ociManifest };
  }

  /** The blob's size when the repository has it, else undefined. */
  async blobSize(repository: string, digest: string): Promise<number | undefined> {
    const res = await this.transport.call({
      method: 'HEAD',
      path: `/v2/${repository}/blobs/${digest}`,
      scope: [`repository:${repository}:pull`],
      expect: [200, 404],
      what: `check blob ${repository}@${digest}`,
    });
    await drain(res.body);
    if (res.status === 404) return undefined;
    const size = Number(header(res, 'content-length'));
    return Number.isFinite(size) ? size : 0;
  }

  /**
   * The blob's bytes as a stream that fails when they are not `digest` (and, when given, `size`
   * bytes): at the end, or as soon as there are too many. A failure before anything reads the
   * stream waits for its reader, never an unhandled 'error'. `signal` stops the transfer.
   */
  async getBlob(repository: string, digest: string, size?: number, signal?: AbortSignal): Promise<Readable> {
    const what = `get blob ${repository}@${digest}`;
    const res = await this.transport.call({
      method: 'GET',
      path: `/v2/${repository}/blobs/${digest}`,
      scope: [`repository:${repository}:pull`],
      expect: [200],
      what,
      signal,
    });
    const length = Number(header(res, 'content-length') ?? Number.NaN);
    if (size !== undefined && Number.isFinite(length) && length !== size) {
      res.body.destroy();
      throw new OciError(
        'ContentMismatch',
        `${what}: the registry announced ${length} bytes, its descriptor says ${size}`,
      );
    }
    const expected = size ?? (Number.isFinite(length) ? length : undefined);
    return Readable.from(verified(res.body, digest, expected, what, signal), { objectMode: false });
  }

  /** All tags of a repository (empty when the repository does not exist). */
  async listTags(repository: string): Promise<string[]> {
    const tags: string[] = [];
    let path: string | undefined = `/v2/${repository}/tags/list?n=1000`;
    while (path) {
      const res: Response = await this.transport.call({
        method: 'GET',
        path,
        scope: [`repository:${repository}:pull`],
        expect: [200, 404],
        what: `list tags of ${repository}`,
      });
      if (res.status === 404) {
        await drain(res.body);
        return tags;
      }
      const body = JSON.parse((await readSmall(res.body)).toString('utf8')) as {
        tags?: string[] | null;
      };
      tags.push(...(body.tags ?? []));
      // Link: </v2/<name>/tags/list?n=1000&last=x>; rel="next"
      const link = header(res, 'link');
      path = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1] : undefined;
    }
    return tags;
  }

  // ---- writing ----

  /**
   * Makes the blob present in `repository`: nothing when it is there already, a cross-repository
   * mount when one of `mountFrom` has it, else an upload (blob-upload.ts).
   */
  async pushBlob(repository: string, source: BlobSource, mountFrom: string[] = []): Promise<UploadOutcome> {
    if ((await this.blobSize(repository, source.digest)) !== undefined) {
      await source.staged?.cancel();
      return this.report(repository, source, 'exists');
    }
    if (source.staged) {
      await source.staged.commit(source.digest);
      return this.report(repository, source, 'uploaded');
    }
    return this.report(repository, source, await this.uploads.send(repository, source, mountFrom));
  }

  /**
   * Sends a blob whose digest and size are not known yet (bytes produced while they go up); the
   * returned upload commits it under its digest once the caller knows it, or cancels it.
   */
  stageBlob(repository: string, body: Readable | AsyncIterable<Uint8Array>): Promise<StagedUpload> {
    return this.uploads.stage(repository, body);
  }

  /** Stores a manifest under a tag or its digest; returns its digest (checked against the registry's). */
  async putManifest(
    repository: string,
    reference: string,
    bytes: Buffer,
    mediaType: string,
  ): Promise<string> {
    const digest = digestOf(bytes);
    const res = await this.transport.call({
      method: 'PUT',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull,push`],
      headers: { 'content-type': mediaType },
      body: bytes,
      expect: [201],
      what: `push manifest ${repository}:${reference}`,
    });
    await drain(res.body);
    const stored = header(res, 'docker-content-digest');
    if (stored && stored !== digest) {
      throw new OciError(
        'Protocol',
        `registry stored manifest ${repository}:${reference} as ${stored}, sent ${digest}`,
      );
    }
    return digest;
  }

  /** Deletes a manifest (and so every tag pointing to it). False when it was already gone. */
  async deleteManifest(repository: string, digest: string): Promise<boolean> {
    const res = await this.transport.call({
      method: 'DELETE',
      path: `/v2/${repository}/manifests/${digest}`,
      scope: [`repository:${repository}:pull,push,delete`],
      expect: [202, 404],
      what: `delete manifest ${repository}@${digest}`,
    });
    await drain(res.body);
    return res.status === 202;
  }

  private report(repository: string, source: BlobSource, outcome: UploadOutcome): UploadOutcome {
    this.onBlobTransfer?.({ repository, digest: source.digest, outcome });
    return outcome;
  }
}
