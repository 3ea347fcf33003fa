// What every endpoint of the simulator shares: errors answered as `{"error": "..."}`, JSON bodies
// read and then validated by the admin API's own zod schemas (src/api/schemas.ts), and the
// sliding-window limits that answer 429.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { SlidingWindow } from '../api/sliding-window.ts';

const MAX_BODY = 1 << 20;

export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, extra: Record<string, unknown> = {}, headers = {}) {
    super(message);
    this.status = status;
    this.body = { error: message, ...extra };
    this.headers = headers;
  }
}

/** A JSON answer, returned by an endpoint and sent by the router. */
export interface Reply {
  status: number;
  body: unknown;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The request body as JSON; undefined when it is empty. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'Request body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Request body must be valid JSON');
  }
}

/** The body as `schema` reads it, or a 400 whose `details` name each bad field (`''`: the body itself). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({
    path: issue.path.join('.'),
    message: issue.message,
  }));
  const fields = details.map((d) => d.path || 'body').join(', ');
  throw new HttpError(400, `Invalid request: ${fields}`, { details });
}

/** A sliding-window limit: records one more event for `id`, or throws 429 (with Retry-After unless told not to). */
export function countInWindow(
  events: Map<string, SlidingWindow>,
  id: string,
  now: () => number,
  windowMs: number,
  limit: number,
  message: string,
  retryAfter = true,
): void {
  let window = events.get(id);
  if (!window) {
    window = new SlidingWindow(windowMs, now);
    events.set(id, window);
  }
  const waitMs = window.delayMs(limit);
  if (waitMs > 0) {
    const retryAfterSec = Math.max(1, Math.ceil(waitMs / 1000));
    throw new HttpError(429, message, {}, retryAfter ? { 'retry-after': String(retryAfterSec) } : {});
  }
  window.add(now(), undefined);
}
