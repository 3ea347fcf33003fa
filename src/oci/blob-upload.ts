// Blob uploads of the distribution API: a cross-repository mount when another repository has the
// blob, else an upload session (POST, then one PUT, or PATCH chunks and a closing PUT), or a
// streamed PATCH whose digest comes with a later commit (bytes produced while they go up).
import type { Readable } from 'node:stream';
import type { BlobSource, StagedUpload } from './content.ts';
import { OciError } from './errors.ts';
import { type Body, drain, header, type RegistryTransport, type Response } from './transport.ts';

/** Splits one stream into consecutive pieces of `size` bytes, each consumed as its own body. */
class ChunkedReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private pending: Uint8Array | undefined;
  done = false;

  constructor(source: Readable | AsyncIterable<Uint8Array>) {
    this.iterator = (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  }

  async *piece(size: number): AsyncGenerator<Uint8Array> {
    let left = size;
    while (left > 0) {
      let chunk = this.pending;
      this.pending = undefined;
      if (!chunk) {
        const next = await this.iterator.next();
        if (next.done) {
          this.done = true;
          return;
        }
        chunk = next.value;
      }
      if (chunk.length > left) {
        this.pending = chunk.subarray(left);
        chunk = chunk.subarray(0, left);
      }
      left -= chunk.length;
      yield chunk;
    }
  }
}

export class BlobUploads {
  private readonly transport: RegistryTransport;
  /** Blobs above this size go up in PATCH chunks of this size; smaller ones in one PUT. */
  private readonly chunkSize: number;

  constructor(transport: RegistryTransport, chunkSize: number) {
    this.transport = transport;
    this.chunkSize = chunkSize;
  }

  /**
   * Sends a blob the repository lacks: a mount when one of `mountFrom` has it, else an upload (one
   * PUT up to the chunk size, PATCH chunks above it).
   */
  async send(repository: string, source: BlobSource, mountFrom: string[]): Promise<'mounted' | 'uploaded'> {
    let location: string | undefined;
    for (const from of mountFrom.filter((name) => name !== repository)) {
      const res = await this.transport.call({
        method: 'POST',
        path: `/v2/${repository}/blobs/uploads/?mount=${encodeURIComponent(source.digest)}&from=${encodeURIComponent(from)}`,
        scope: [`repository:${repository}:pull,push`, `repository:${from}:pull`],
        expect: [201, 202],
        what: `mount blob ${source.digest} from ${from} into ${repository}`,
      });
      await drain(res.body);
      if (res.status === 201) return 'mounted';
      // 202: the registry could not mount and opened an ordinary upload instead.
      location = this.uploadLocation(res);
      break;
    }
    location ??= await this.start(repository);
    if (source.size <= this.chunkSize) {
      await this.finish(repository, location, source.digest, source.open(), source.size);
      return 'uploaded';
    }
    const reader = new ChunkedReader(source.open());
    let offset = 0;
    while (offset < source.size) {
      const length = Math.min(this.chunkSize, source.size - offset);
      const res = await this.transport.call({
        method: 'PATCH',
        path: location,
        scope: [`repository:${repository}:pull,push`],
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(length),
          'content-range': `${offset}-${offset + length - 1}`,
        },
        body: reader.piece(length),
        expect: [202],
        what: `upload blob ${source.digest} to ${repository} (chunk at ${offset})`,
      });
      await drain(res.body);
      location = this.uploadLocation(res);
      offset += length;
    }
    await this.finish(repository, location, source.digest, undefined, 0);
    return 'uploaded';
  }

  /**
   * Sends a blob whose digest and size are not known yet: one streamed PATCH, as skopeo sends
   * layers. The digest goes with the commit (the distribution API takes it only at the final PUT),
   * which the returned upload does once the caller knows it.
   */
  async stage(repository: string, body: Readable | AsyncIterable<Uint8Array>): Promise<StagedUpload> {
    const location = await this.start(repository);
    const scope = [`repository:${repository}:pull,push`];
    // Best effort: a registry keeps an abandoned upload only until it purges stale ones.
    const cancel = async (at: string) => {
      const gone = await this.transport
        .call({
          method: 'DELETE',
          path: at,
          scope,
          expect: [204, 404],
          what: `cancel an upload to ${repository}`,
        })
        .catch(() => undefined);
      if (gone) await drain(gone.body);
    };
    let next: string;
    try {
      const res = await this.transport.call({
        method: 'PATCH',
        path: location,
        scope,
        headers: { 'content-type': 'application/octet-stream' },
        body,
        expect: [202],
        what: `upload blob to ${repository}`,
      });
      await drain(res.body);
      next = this.uploadLocation(res);
    } catch (error) {
      await cancel(location);
      throw error;
    }
    let settled = false;
    return {
      commit: async (digest) => {
        if (settled)
          throw new OciError('Usage', `the upload of ${digest} to ${repository} is settled already`);
        settled = true;
        await this.finish(repository, next, digest, undefined, 0);
      },
      cancel: async () => {
        if (settled) return;
        settled = true;
        await cancel(next);
      },
    };
  }

  private async start(repository: string): Promise<string> {
    const res = await this.transport.call({
      method: 'POST',
      path: `/v2/${repository}/blobs/uploads/`,
      scope: [`repository:${repository}:pull,push`],
      expect: [202],
      what: `start blob upload to ${repository}`,
    });
    await drain(res.body);
    return this.uploadLocation(res);
  }

  private async finish(
    repository: string,
    location: string,
    digest: string,
    body: Body,
    length: number,
  ): Promise<void> {
    const url = new URL(location);
    url.searchParams.set('digest', digest);
    const res = await this.transport.call({
      method: 'PUT',
      path: url.toString(),
      scope: [`repository:${repository}:pull,push`],
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(length) },
      body,
      expect: [201],
      what: `upload blob ${digest} to ${repository}`,
    });
    await drain(res.body);
  }

  private uploadLocation(res: Response): string {
    const location = header(res, 'location');
    if (!location) throw new OciError('Protocol', 'registry opened an upload without a Location header');
    return this.transport.resolveUrl(location);
  }
}
