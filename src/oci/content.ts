// What a registry stores, whoever moves it: media types, descriptors, digests, and the sources a
// blob upload reads its bytes from.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';

export const MEDIA_TYPES = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
} as const;

/** A content-addressed object: what a manifest points at. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** Content a blob upload reads; `open` may be called more than once (a retried or resumed upload). */
export interface BlobSource {
  digest: string;
  size: number;
  /** The bytes from `offset` (default 0) to the end. */
  open(offset?: number): Readable | AsyncIterable<Uint8Array>;
  /** Bytes already sent in an open upload (`stageBlob`): pushing commits it instead of reading `open`. */
  staged?: StagedUpload;
}

/**
 * An upload whose bytes have been sent but not committed: the registry holds them under no digest
 * (nothing can reference them) until `commit`; `cancel` drops them. Either settles it for good.
 */
export interface StagedUpload {
  commit(digest: string): Promise<void>;
  cancel(): Promise<void>;
}

/** `sha256:<hex>` of the bytes. */
export function digestOf(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** A blob source over bytes in memory (configs, manifests, small layers). */
export function bufferSource(bytes: Buffer): BlobSource {
  return {
    digest: digestOf(bytes),
    size: bytes.length,
    open: (offset = 0) => Readable.from([bytes.subarray(offset)]),
  };
}
