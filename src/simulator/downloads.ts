// Bundle downloads, served as an object store serves a presigned link: S3-style XML errors for a
// bad or expired link, Range and If-Range, HEAD, and the download faults (corrupted bytes, a
// connection dropped half-way).

import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ExportJobs } from './export-jobs.ts';
import { type BundleLink, type LinkCheck, parseRange } from './signing.ts';

type DownloadFault = 'malformed' | 'truncate';

function sendS3Error(res: ServerResponse, status: number, code: string, message: string): void {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
  res.end(xml);
}

function writeChunk(res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
}

/** `check`: whether the link's signature and expiry hold now. */
export async function download(
  req: IncomingMessage,
  res: ServerResponse,
  jobs: ExportJobs,
  link: BundleLink,
  check: LinkCheck,
  fault: DownloadFault | undefined,
): Promise<void> {
  const { jobId } = link;
  if (!check.ok) {
    sendS3Error(res, 403, check.code, check.message);
    return;
  }
  const job = jobs.get(jobId);
  const result = job?.result;
  if (!job || !result) {
    sendS3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    return;
  }
  const size = result.sizeBytes;
  const etag = `"${jobId}-${job.renderedAt}-${size}"`;
  const headers: Record<string, string | number> = {
    'accept-ranges': 'bytes',
    'content-type': 'application/gzip',
    etag,
    'last-modified': new Date(job.renderedAt ?? job.createdAt).toUTCString(),
    'content-disposition': `attachment; filename="${job.domain.split('.')[0]}-export-${new Date(job.createdAt).toISOString().slice(0, 10)}.tar.gz"`,
  };
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== etag ? undefined : parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': 0 });
    res.end();
    return;
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const length = end - start + 1;
  if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  headers['content-length'] = length;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return;
  }
  if (!fault) {
    await pipeline(createReadStream(result.archivePath, { start, end, highWaterMark: 256 * 1024 }), res);
    return;
  }
  // Truncation sends about half the promised bytes, then drops the connection.
  const sendEnd = fault === 'truncate' ? start + Math.max(0, Math.floor(length / 2) - 1) : end;
  const stream = createReadStream(result.archivePath, { start, end: sendEnd });
  let offset = start;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (fault === 'malformed') {
      // Same length, corrupted bytes: only a checksum notices.
      for (let i = (1024 - (offset % 1024)) % 1024; i < chunk.length; i += 1024)
        chunk[i] = (chunk[i] ?? 0) ^ 0xff;
    }
    offset += chunk.length;
    if (res.destroyed) return;
    await writeChunk(res, chunk);
  }
  if (fault === 'truncate') {
    res.destroy();
    return;
  }
  res.end();
}
