// The embedded admin API: the contract (seeds/000) plus VENDOR-FACTS over real HTTP, so the
// production client and the CLI can be exercised without a vendor account.

import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../log.ts';
import { type LongTimer, setLongTimeout, wait } from '../timers.ts';
import { type FaultEndpoint, type FaultSpec, FaultTable, isSiteFault, type SiteFault } from './faults.ts';
import { type ExportProgressModel, exportProgress } from './progress.ts';
import {
  type BundleLink,
  bundlePath,
  checkBundleLink,
  type LinkStyle,
  parseBundleLink,
  parseRange,
  signBundleUrl,
} from './signing.ts';
import { DEFAULT_DOCS_DIR, listDocs, RenderError, type RenderedBundle, renderBundle } from './site.ts';

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The admin key to accept; a `mint_<random>` key is generated when absent. */
  adminKey?: string;
  /** Valid keys whose plan lacks static export: 403 on the export endpoints. */
  nonEnterpriseKeys?: string[];
  /** Markdown folder exported by every job; the shipped sample docs by default. */
  docsDir?: string;
  /** Time from start to completion of an export job. Default 4000. */
  exportDurationMs?: number;
  /** How a running export reports progress (see ExportProgressModel). Default linear. */
  exportProgress?: ExportProgressModel;
  /** Time source, epoch ms (benchmarks pass a virtual clock). Default Date.now. */
  clock?: () => number;
  /** Time an agent job stays active. Default 2000. */
  agentJobDurationMs?: number;
  /** Lifetime of generated bundle links. Default 900. */
  linkTtlSeconds?: number;
  /** Where bundle links carry their signature (see LinkStyle). Default query. */
  linkStyle?: LinkStyle;
  faults?: ReadonlyArray<FaultSpec | string>;
  /** Agent job creations per project per hour. Default 100, as in the contract. */
  rateLimitPerHour?: number;
  /**
   * Admin API requests per key per minute, as the vendor limits them (about 100); 429 beyond.
   * Default: no limit, since tests and benchmarks poll faster on purpose.
   */
  requestsPerMinute?: number;
  /** Pads each bundle with about this many incompressible bytes (benchmarks). */
  padBytes?: number;
  /** Origin used in bundle links when clients reach the simulator under another address. */
  publicBaseUrl?: string;
  /** Random source for fault rates (tests can make it deterministic). */
  random?: () => number;
  logger?: Logger;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string, and a download's without its link's credentials. */
  path: string;
  endpoint: FaultEndpoint | 'agent-archive' | 'other';
  /** 0 when the connection was destroyed before a status was sent. */
  status: number;
  /** Epoch ms (simulator clock) when the request arrived. */
  time: number;
  durationMs: number;
  /** Faults applied to this request, in `parseFault` syntax. */
  faults?: string[];
}

export type ExportJobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface ExportJobSnapshot {
  jobId: string;
  domain: string;
  status: ExportJobStatus;
  progress?: number;
  pageCount?: number;
  error?: string;
  sizeBytes?: number;
  /** Files of the rendered bundle once completed. */
  files?: string[];
}

export interface Simulator {
  readonly baseUrl: string;
  readonly adminKey: string;
  /** Every request handled so far, oldest first. Never holds headers or query strings. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
  setFaults(faults: ReadonlyArray<FaultSpec | string>): void;
  /** Accepts `key` instead of the admin key so far (a rotated key); jobs and links stay. */
  setAdminKey(key: string): void;
  setDocsDir(dir: string): void;
  setExportDurationMs(ms: number): void;
  /** Applies to exports started from now on. */
  setExportProgress(model: ExportProgressModel): void;
  setAgentJobDurationMs(ms: number): void;
  setLinkTtlSeconds(seconds: number): void;
  setPadBytes(bytes: number): void;
  /** Moves the simulator clock forward (link expiry, rate-limit windows, job progress). */
  advanceTime(ms: number): void;
  now(): number;
  exportJobsStarted(): number;
  agentJobsCreated(projectId?: string): number;
  exportJob(jobId: string): ExportJobSnapshot | undefined;
  /** A correctly signed link for a completed job with any expiry (e.g. already expired). */
  signBundleUrl(jobId: string, expiresAtMs: number): string;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** A sliding-window limit: records one more event for `id`, or throws 429 with Retry-After. */
function countInWindow(
  events: Map<string, number[]>,
  id: string,
  now: number,
  windowMs: number,
  limit: number,
  message: string,
): void {
  const recent = (events.get(id) ?? []).filter((t) => t > now - windowMs);
  events.set(id, recent);
  if (recent.length >= limit) {
    const retryAfterSec = Math.max(1, Math.ceil(((recent[0] ?? now) + windowMs - now) / 1000));
    throw new HttpError(429, message, {}, { 'retry-after': String(retryAfterSec) });
  }
  recent.push(now);
}
const MAX_BODY = 1 << 20;
/** How long a status or bundle request waits for a finishing render before answering. */
const RENDER_WAIT_MS = 1500;

interface AgentJobState {
  id: string;
  projectId: string;
  createdAt: number;
  activeSince: number;
  archivedAt?: number;
  fails: boolean;
  prNumber: number;
}

interface ExportJobState {
  jobId: string;
  domain: string;
  version?: string;
  paths?: string[];
  createdAt: number;
  durationMs: number;
  progressModel: ExportProgressModel;
  docsDir: string;
  totalPages: number;
  /** The site this job renders is bad on purpose (a `start` content fault). */
  siteFault?: SiteFault;
  render?: Promise<void>;
  result?: RenderedBundle;
  renderedAt?: number;
  error?: string;
  timer?: LongTimer;
}

class HttpError extends Error {
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

type Route =
  | { endpoint: 'agent-create'; projectId: string }
  | { endpoint: 'agent-get' | 'agent-message' | 'agent-archive'; projectId: string; id: string }
  | { endpoint: 'start' }
  | { endpoint: 'status' | 'bundle'; jobId: string }
  | { endpoint: 'download'; jobId: string; link: BundleLink };

/** `link`: the request URL read as a bundle link (parseBundleLink), once per request. */
function matchRoute(method: string, path: string, link: BundleLink | undefined): Route | HttpError {
  let seg: string[];
  try {
    seg = path.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return new HttpError(400, 'Malformed percent-encoding in the path');
  }
  const is = (m: string): boolean => method === m || (m === 'GET' && method === 'HEAD');
  let route: Route | undefined;
  let allowed: string | undefined;
  if (seg[0] === 'v2' && seg[1] === 'agent' && seg[2] && seg[3] === 'job') {
    const projectId = seg[2];
    if (seg.length === 4) [route, allowed] = [{ endpoint: 'agent-create', projectId }, 'POST'];
    else if (seg.length === 5 && seg[4])
      [route, allowed] = [{ endpoint: 'agent-get', projectId, id: seg[4] }, 'GET'];
    else if (seg.length === 6 && seg[4] && (seg[5] === 'message' || seg[5] === 'archive')) {
      const endpoint = seg[5] === 'message' ? 'agent-message' : 'agent-archive';
      [route, allowed] = [{ endpoint, projectId, id: seg[4] }, 'POST'];
    }
  } else if (seg[0] === 'v1' && seg[1] === 'static-export' && seg[2] === 'jobs') {
    if (seg.length === 3) [route, allowed] = [{ endpoint: 'start' }, 'POST'];
    else if (seg.length === 4 && seg[3]) [route, allowed] = [{ endpoint: 'status', jobId: seg[3] }, 'GET'];
    else if (seg.length === 5 && seg[3] && seg[4] === 'bundle') {
      [route, allowed] = [{ endpoint: 'bundle', jobId: seg[3] }, 'POST'];
    }
  } else if (seg[0] === 'bundles' && link) {
    [route, allowed] = [{ endpoint: 'download', jobId: link.jobId, link }, 'GET'];
  }
  if (!route || !allowed) return new HttpError(404, `No such endpoint: ${method} ${path}`);
  if (!is(allowed))
    return new HttpError(405, `Method ${method} not allowed; use ${allowed}`, {}, { allow: allowed });
  return route;
}

// A bare host: labels of letters, digits and hyphens separated by dots; no scheme, port or path.
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i;

function validateExportBody(body: unknown): { domain: string; version?: string; paths?: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Request body must be a JSON object', {
      details: [{ path: '', message: 'expected object' }],
    });
  }
  const { domain, version, paths } = body as Record<string, unknown>;
  const details: Array<{ path: string; message: string }> = [];
  if (typeof domain !== 'string' || domain === '')
    details.push({ path: 'domain', message: 'required string' });
  else if (!DOMAIN.test(domain)) {
    details.push({
      path: 'domain',
      message: 'must be a bare host such as docs.example.com (no scheme, port or path)',
    });
  }
  if (version !== undefined && typeof version !== 'string')
    details.push({ path: 'version', message: 'must be a string' });
  if (paths !== undefined && !(Array.isArray(paths) && paths.every((p) => typeof p === 'string'))) {
    details.push({ path: 'paths', message: 'must be an array of strings' });
  }
  if (details.length)
    throw new HttpError(400, `Invalid request: ${details.map((d) => d.path).join(', ')}`, { details });
  const out: { domain: string; version?: string; paths?: string[] } = { domain: domain as string };
  if (typeof version === 'string') out.version = version;
  if (Array.isArray(paths)) out.paths = paths as string[];
  return out;
}

function promptOf(body: unknown): string {
  const prompt =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).prompt : undefined;
  if (typeof prompt !== 'string' || prompt.length < 1) {
    throw new HttpError(400, 'Invalid request: prompt is required', {
      details: [{ path: 'prompt', message: 'String must contain at least 1 character(s)' }],
    });
  }
  return prompt;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
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

function sendJson(
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

function sendS3Error(res: ServerResponse, status: number, code: string, message: string): void {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
  res.end(xml);
}

function writeChunk(res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
}

function hexId(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

class SimulatorServer implements Simulator {
  baseUrl = '';
  adminKey: string;
  readonly requests: RecordedRequest[] = [];
  private readonly nonEnterprise: Set<string>;
  private docsDir: string;
  private exportDurationMs: number;
  private exportProgress: ExportProgressModel;
  private readonly clock: () => number;
  private agentJobDurationMs: number;
  private linkTtlSeconds: number;
  private readonly linkStyle: LinkStyle;
  private padBytes: number;
  private readonly rateLimitPerHour: number;
  private readonly requestsPerMinute: number | undefined;
  private readonly recentRequests = new Map<string, number[]>();
  private readonly faults: FaultTable;
  private readonly secret = randomBytes(32);
  private readonly logger: Logger | undefined;
  private readonly agentJobs = new Map<string, AgentJobState>();
  private readonly agentCreations = new Map<string, number[]>();
  private readonly exportJobs = new Map<string, ExportJobState>();
  private clockOffsetMs = 0;
  private lastMtimeSec = 0;
  private prCounter = 0;
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private workRoot = '';
  private linkBase = '';

  constructor(options: SimulatorOptions) {
    this.adminKey = options.adminKey ?? `mint_${hexId(24)}`;
    this.nonEnterprise = new Set(options.nonEnterpriseKeys ?? []);
    this.docsDir = options.docsDir ?? DEFAULT_DOCS_DIR;
    this.exportDurationMs = options.exportDurationMs ?? 4000;
    this.exportProgress = options.exportProgress ?? 'linear';
    this.clock = options.clock ?? Date.now;
    this.agentJobDurationMs = options.agentJobDurationMs ?? 2000;
    this.linkTtlSeconds = options.linkTtlSeconds ?? 900;
    this.linkStyle = options.linkStyle ?? 'query';
    this.padBytes = options.padBytes ?? 0;
    this.rateLimitPerHour = options.rateLimitPerHour ?? 100;
    this.requestsPerMinute = options.requestsPerMinute || undefined;
    this.faults = new FaultTable(options.random ?? Math.random);
    this.faults.set(options.faults ?? []);
    this.logger = options.logger;
    this.linkBase = options.publicBaseUrl ?? '';
  }

  async listen(port: number, host: string): Promise<void> {
    this.workRoot = await mkdtemp(join(tmpdir(), 'static-export-sim-'));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : shownHost;
    this.baseUrl = `http://${reachable}:${address.port}`;
    this.linkBase ||= this.baseUrl;
  }

  async close(): Promise<void> {
    for (const job of this.exportJobs.values()) job.timer?.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Let renders in flight finish before their scratch space goes away.
    await Promise.allSettled([...this.exportJobs.values()].map((j) => j.render));
    if (this.workRoot) await rm(this.workRoot, { recursive: true, force: true });
  }

  setFaults(faults: ReadonlyArray<FaultSpec | string>): void {
    this.faults.set(faults);
  }
  setAdminKey(key: string): void {
    this.adminKey = key;
  }
  setDocsDir(dir: string): void {
    this.docsDir = dir;
  }
  setExportDurationMs(ms: number): void {
    this.exportDurationMs = ms;
  }
  setExportProgress(model: ExportProgressModel): void {
    this.exportProgress = model;
  }
  setAgentJobDurationMs(ms: number): void {
    this.agentJobDurationMs = ms;
  }
  setLinkTtlSeconds(seconds: number): void {
    this.linkTtlSeconds = seconds;
  }
  setPadBytes(bytes: number): void {
    this.padBytes = bytes;
  }
  advanceTime(ms: number): void {
    this.clockOffsetMs += ms;
  }
  now(): number {
    return this.clock() + this.clockOffsetMs;
  }
  exportJobsStarted(): number {
    return this.exportJobs.size;
  }
  agentJobsCreated(projectId?: string): number {
    if (projectId === undefined) return this.agentJobs.size;
    return [...this.agentJobs.values()].filter((j) => j.projectId === projectId).length;
  }
  exportJob(jobId: string): ExportJobSnapshot | undefined {
    const job = this.exportJobs.get(jobId);
    if (!job) return undefined;
    const view = this.exportView(job);
    const snapshot: ExportJobSnapshot = { jobId, domain: job.domain, status: view.status };
    if (view.progress !== undefined) snapshot.progress = view.progress;
    if (view.pageCount !== undefined) snapshot.pageCount = view.pageCount;
    if (job.error !== undefined) snapshot.error = job.error;
    if (job.result) {
      snapshot.sizeBytes = job.result.sizeBytes;
      snapshot.files = job.result.files;
    }
    return snapshot;
  }
  signBundleUrl(jobId: string, expiresAtMs: number): string {
    return signBundleUrl(this.linkBase, this.secret, jobId, Math.floor(expiresAtMs / 1000), this.linkStyle);
  }

  // --- request handling ---

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = this.now();
    const startedReal = performance.now();
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    // A download is recorded and logged without the link's credentials, wherever its style put them.
    const link = parseBundleLink(req.url ?? '/');
    const record: RecordedRequest = {
      method,
      path: link ? bundlePath(link.jobId) : path,
      endpoint: 'other',
      status: 0,
      time: started,
      durationMs: 0,
    };
    res.on('close', () => {
      record.status = res.headersSent ? res.statusCode : 0;
      record.durationMs = Math.round(performance.now() - startedReal);
      this.requests.push(record);
      this.logger?.debug(
        { method, path: record.path, status: record.status, faults: record.faults },
        'simulator request',
      );
    });
    try {
      const route = matchRoute(method, path, link);
      if (route instanceof HttpError) throw route;
      record.endpoint = route.endpoint;
      let siteFault: SiteFault | undefined;
      if (route.endpoint !== 'agent-archive') {
        const fault = this.faults.decide(route.endpoint);
        if (fault.applied.length) record.faults = fault.applied;
        if (fault.delayMs > 0) await wait(fault.delayMs);
        // Faults act before the endpoint does, so a faulted request has no side effects.
        if (fault.action?.kind === 'reset') {
          req.socket.destroy();
          return;
        }
        if (fault.action?.kind === 'status') {
          const headers: Record<string, string> = fault.action.status === 429 ? { 'retry-after': '1' } : {};
          throw new HttpError(
            fault.action.status,
            `Injected fault: HTTP ${fault.action.status}`,
            {},
            headers,
          );
        }
        if (fault.action?.kind === 'malformed' && route.endpoint !== 'download') {
          const junk = '<html><body>502 Bad Gateway (injected malformed body)';
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(junk);
          return;
        }
        if (route.endpoint === 'download') {
          const kind = fault.action?.kind;
          await this.download(
            req,
            res,
            route.link,
            kind === 'malformed' || kind === 'truncate' ? kind : undefined,
          );
          return;
        }
        if (isSiteFault(fault.action)) siteFault = fault.action;
      }
      await this.api(req, res, route, siteFault);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) {
        sendJson(res, err.status, err.body, err.headers);
        return;
      }
      this.logger?.error({ err }, 'simulator internal error');
      sendJson(res, 500, { error: 'Internal server error' });
    }
  }

  private authorize(req: IncomingMessage, needsExport: boolean): void {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer (\S+)$/.exec(header);
    const key = m?.[1];
    if (!key || (key !== this.adminKey && !this.nonEnterprise.has(key))) {
      throw new HttpError(401, 'Invalid or missing admin API key', {}, { 'www-authenticate': 'Bearer' });
    }
    this.checkRequestRate(key);
    if (needsExport && key !== this.adminKey) {
      throw new HttpError(
        403,
        'Static export is not enabled for this organization: it requires an Enterprise plan',
      );
    }
  }

  private async api(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    siteFault: SiteFault | undefined,
  ): Promise<void> {
    const isExport = route.endpoint === 'start' || route.endpoint === 'status' || route.endpoint === 'bundle';
    this.authorize(req, isExport);
    switch (route.endpoint) {
      case 'agent-create': {
        const prompt = promptOf(await readJson(req));
        this.checkAgentRateLimit(route.projectId);
        const job: AgentJobState = {
          id: `job_${hexId(12)}`,
          projectId: route.projectId,
          createdAt: this.now(),
          activeSince: this.now(),
          fails: /fail/i.test(prompt),
          prNumber: ++this.prCounter,
        };
        this.agentJobs.set(job.id, job);
        sendJson(res, 201, this.agentView(job));
        return;
      }
      case 'agent-get':
        sendJson(res, 200, this.agentView(this.agentJob(route.projectId, route.id)));
        return;
      case 'agent-message': {
        const prompt = promptOf(await readJson(req));
        const job = this.agentJob(route.projectId, route.id);
        if (job.archivedAt !== undefined)
          throw new HttpError(409, 'Agent job is archived; create a new job instead');
        job.activeSince = this.now();
        job.fails = /fail/i.test(prompt);
        sendJson(res, 200, this.agentView(job));
        return;
      }
      case 'agent-archive': {
        const job = this.agentJob(route.projectId, route.id);
        job.archivedAt ??= this.now();
        sendJson(res, 200, this.agentView(job));
        return;
      }
      case 'start': {
        const body = validateExportBody(await readJson(req));
        const job = await this.startExport(body, siteFault);
        // Viewed at its creation instant: the start response always says queued, as the contract does.
        sendJson(res, 202, this.exportView(job, job.createdAt));
        return;
      }
      case 'status': {
        const job = this.exportJobOr404(route.jobId);
        await this.settle(job);
        sendJson(res, 200, this.exportView(job));
        return;
      }
      case 'bundle': {
        const job = this.exportJobOr404(route.jobId);
        await this.settle(job);
        const view = this.exportView(job);
        if (view.status === 'failed') {
          throw new HttpError(409, `Export job ${job.jobId} failed; start a new export`, {
            status: view.status,
          });
        }
        if (!job.result) {
          throw new HttpError(409, `Export job ${job.jobId} is not completed yet (status: ${view.status})`, {
            status: view.status,
          });
        }
        const expiresSec = Math.floor(this.now() / 1000) + this.linkTtlSeconds;
        sendJson(res, 200, {
          jobId: job.jobId,
          bundleUrl: signBundleUrl(this.linkBase, this.secret, job.jobId, expiresSec, this.linkStyle),
          sizeBytes: job.result.sizeBytes,
          expiresAt: new Date(expiresSec * 1000).toISOString(),
        });
        return;
      }
      case 'download':
        return;
    }
  }

  private checkAgentRateLimit(projectId: string): void {
    countInWindow(
      this.agentCreations,
      projectId,
      this.now(),
      HOUR_MS,
      this.rateLimitPerHour,
      'Too many sessions created. Please try again later.',
    );
  }

  private checkRequestRate(key: string): void {
    if (this.requestsPerMinute === undefined) return;
    countInWindow(
      this.recentRequests,
      key,
      this.now(),
      MINUTE_MS,
      this.requestsPerMinute,
      'Too many requests. Please try again later.',
    );
  }

  private agentJob(projectId: string, id: string): AgentJobState {
    const job = this.agentJobs.get(id);
    if (!job || job.projectId !== projectId) throw new HttpError(404, `Agent job ${id} not found`);
    return job;
  }

  private agentView(job: AgentJobState): Record<string, unknown> {
    const doneAt = job.activeSince + this.agentJobDurationMs;
    const now = this.now();
    const finished = (job.archivedAt ?? now) >= doneAt;
    const status =
      job.archivedAt !== undefined ? 'archived' : !finished ? 'active' : job.fails ? 'failed' : 'completed';
    const prLink =
      finished && !job.fails ? `https://github.com/acme/${job.projectId}-docs/pull/${job.prNumber}` : null;
    return {
      id: job.id,
      status,
      source: { repository: `https://github.com/acme/${job.projectId}-docs`, ref: 'main' },
      model: 'sim-agent-1',
      prLink,
      createdAt: new Date(job.createdAt).toISOString(),
      archivedAt: job.archivedAt === undefined ? null : new Date(job.archivedAt).toISOString(),
    };
  }

  private async startExport(
    body: { domain: string; version?: string; paths?: string[] },
    siteFault: SiteFault | undefined,
  ): Promise<ExportJobState> {
    const totalPages = (await listDocs(this.docsDir)).pages.length;
    const job: ExportJobState = {
      jobId: `se_${hexId(8)}`,
      domain: body.domain,
      createdAt: this.now(),
      durationMs: this.exportDurationMs,
      progressModel: this.exportProgress,
      docsDir: this.docsDir,
      totalPages,
    };
    if (body.version !== undefined) job.version = body.version;
    if (siteFault) job.siteFault = siteFault;
    if (body.paths?.length) {
      job.paths = body.paths;
      job.totalPages = Math.min(job.totalPages, body.paths.length);
    }
    this.exportJobs.set(job.jobId, job);
    // On an injected clock the real timer may fire early: only a job whose time is up renders.
    job.timer = setLongTimeout(() => void this.settle(job), job.durationMs, { unref: true });
    return job;
  }

  private exportJobOr404(jobId: string): ExportJobState {
    const job = this.exportJobs.get(jobId);
    if (!job) throw new HttpError(404, `Export job ${jobId} not found`);
    return job;
  }

  /** Starts rendering (once) when the job's time is up; the clock may have been advanced. */
  private async settle(job: ExportJobState): Promise<void> {
    if (this.now() - job.createdAt < job.durationMs) return;
    await Promise.race([this.ensureRender(job), wait(RENDER_WAIT_MS)]);
  }

  private ensureRender(job: ExportJobState): Promise<void> {
    job.render ??= this.render(job);
    return job.render;
  }

  private async render(job: ExportJobState): Promise<void> {
    job.timer?.clear();
    // Archive entries carry the export time; bump by a second when two exports share one so a
    // re-export is always byte-different (tar stores whole seconds).
    const mtimeSec = Math.max(Math.floor(this.now() / 1000), this.lastMtimeSec + 1);
    this.lastMtimeSec = mtimeSec;
    try {
      if (job.domain.startsWith('fail.')) throw new RenderError(`the site ${job.domain} failed to build`);
      const workDir = join(this.workRoot, job.jobId);
      await mkdir(workDir, { recursive: true });
      const options: Parameters<typeof renderBundle>[0] = {
        docsDir: job.docsDir,
        domain: job.domain,
        workDir,
        mtime: new Date(mtimeSec * 1000),
        padBytes: this.padBytes,
      };
      if (job.paths) options.paths = job.paths;
      if (job.siteFault) options.siteFault = job.siteFault;
      job.result = await renderBundle(options);
      job.totalPages = job.result.pageCount;
    } catch (err) {
      job.error =
        err instanceof RenderError ? `Export failed: ${err.message}` : 'Export failed: internal error';
      if (!(err instanceof RenderError)) this.logger?.error({ err }, 'simulator render failed');
    }
    job.renderedAt = this.now();
  }

  private exportView(
    job: ExportJobState,
    now = this.now(),
  ): Record<string, unknown> & { status: ExportJobStatus; progress?: number; pageCount?: number } {
    const base = {
      jobId: job.jobId,
      domain: job.domain,
      ...(job.version === undefined ? {} : { version: job.version }),
      createdAt: new Date(job.createdAt).toISOString(),
    };
    if (job.error !== undefined) {
      return {
        ...base,
        status: 'failed',
        error: job.error,
        updatedAt: new Date(job.createdAt + job.durationMs).toISOString(),
      };
    }
    if (job.result) {
      // The job finished when its time was up; rendering on the first look after that is ours.
      const updatedAt = new Date(job.createdAt + job.durationMs).toISOString();
      return { ...base, status: 'completed', progress: 100, pageCount: job.result.pageCount, updatedAt };
    }
    const elapsed = now - job.createdAt;
    const queuedMs = job.durationMs / 10;
    if (elapsed < queuedMs) return { ...base, status: 'queued', updatedAt: base.createdAt };
    const running = { ...base, status: 'running' as const, updatedAt: new Date(now).toISOString() };
    const progress = exportProgress(job.progressModel, elapsed - queuedMs, job.durationMs - queuedMs);
    if (progress === undefined) return running;
    return { ...running, progress, pageCount: Math.floor((job.totalPages * progress) / 100) };
  }

  private async download(
    req: IncomingMessage,
    res: ServerResponse,
    link: BundleLink,
    fault: 'malformed' | 'truncate' | undefined,
  ): Promise<void> {
    const { jobId } = link;
    const check = checkBundleLink(this.secret, link, this.now());
    if (!check.ok) {
      sendS3Error(res, 403, check.code, check.message);
      return;
    }
    const result = this.exportJobs.get(jobId)?.result;
    if (!result) {
      sendS3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
      return;
    }
    const job = this.exportJobs.get(jobId) as ExportJobState;
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
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = new SimulatorServer(options);
  await sim.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  return sim;
}
