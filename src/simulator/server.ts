// The embedded admin API: the contract (seeds/000) plus VENDOR-FACTS over real HTTP, so the
// production client and the CLI can be exercised without a vendor account. This file routes a
// request, records it, applies the faults drawn for it and checks its key; the endpoints live in
// agent-jobs.ts, export-v1.ts or export-v2.ts (one revision per simulator, over the export-job
// store) and downloads.ts.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SlidingWindow } from '../api/sliding-window.ts';
import type { Logger } from '../log.ts';
import { wait } from '../timers.ts';
import { AgentJobs, type AgentRoute, type AgentSettings } from './agent-jobs.ts';
import { download } from './downloads.ts';
import { type ExportJobSnapshot, ExportJobs, type ExportSettings } from './export-jobs.ts';
import { type ExportV1Route, exportV1 } from './export-v1.ts';
import { ExportV2, type ExportV2Options, type ExportV2Route, type KeyAccess } from './export-v2.ts';
import { type FaultEndpoint, type FaultSpec, FaultTable, isSiteFault } from './faults.ts';
import { countInWindow, HttpError, type Reply, sendJson } from './http.ts';
import {
  type BundleLink,
  bundlePath,
  checkBundleLink,
  type LinkStyle,
  parseBundleLink,
  signBundleUrl,
} from './signing.ts';
import { DEFAULT_DOCS_DIR } from './site.ts';

/** What configure() changes on a running simulator, each from the next request on. */
interface SimulatorSettings extends ExportSettings, AgentSettings {
  faults: ReadonlyArray<FaultSpec | string>;
  /** The admin key to accept (default: a generated `mint_<random>` key); a change (a rotated key) keeps jobs and links. */
  adminKey: string;
}

/** 1: the contract's static export paths; 2: the platform's current, project-scoped ones. */
type ApiRevision = 1 | 2;

export interface SimulatorOptions extends Partial<SimulatorSettings>, ExportV2Options {
  /** Which revision of the static export API is served (the other's paths answer 404). Default 1. */
  apiRevision?: ApiRevision;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Valid keys whose plan lacks static export: 403 on the export endpoints (401 in revision 2). */
  nonEnterpriseKeys?: string[];
  /** Valid keys without write permission: revision 2 answers their starts 403. */
  readOnlyKeys?: string[];
  /**
   * More admin keys of the same organization, with the admin key's rights: all keys share the
   * organization's hourly start limit, each has its own per-minute request limit.
   */
  organizationKeys?: string[];
  /** Time source, epoch ms (benchmarks pass a virtual clock). Default Date.now. */
  clock?: () => number;
  /** Where bundle links carry their signature (see LinkStyle). Default query. */
  linkStyle?: LinkStyle;
  /** Agent job creations per project per hour. Default 100, as in the contract. */
  rateLimitPerHour?: number;
  /**
   * Admin API requests per key per minute, as the vendor limits them (about 100); 429 beyond.
   * Default: no limit, since tests and benchmarks poll faster on purpose.
   */
  requestsPerMinute?: number;
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

export interface Simulator {
  readonly baseUrl: string;
  readonly adminKey: string;
  /** Every request handled so far, oldest first. Never holds headers or query strings. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
  /** Changes the given settings; the others stay. An export keeps the settings it started with. */
  configure(settings: Partial<SimulatorSettings>): void;
  /** Moves the simulator clock forward (link expiry, rate-limit windows, job progress). */
  advanceTime(ms: number): void;
  now(): number;
  exportJobsStarted(): number;
  agentJobsCreated(projectId?: string): number;
  exportJob(jobId: string): ExportJobSnapshot | undefined;
  /** Forgets an export job (the platform's retention purged it): its GET answers 404; false if unknown. */
  purgeExportJob(jobId: string): boolean;
  /** A correctly signed link for a completed job with any expiry (e.g. already expired). */
  signBundleUrl(jobId: string, expiresAtMs: number): string;
}

const MINUTE_MS = 60_000;
/** The per-minute request limit's wording (VENDOR-FACTS). */
const TOO_MANY_REQUESTS = 'Too many requests. Please try again later.';

type Route = AgentRoute | ExportV1Route | ExportV2Route | { endpoint: 'download'; link: BundleLink };

/** `link`: the request URL read as a bundle link (parseBundleLink), once per request. */
function matchRoute(
  method: string,
  path: string,
  link: BundleLink | undefined,
  revision: ApiRevision,
): Route | HttpError {
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
  } else if (revision === 2 && seg[0] === 'v1' && seg[1] === 'static-export' && seg[2] && seg[3] === 'jobs') {
    const projectId = seg[2];
    if (seg.length === 4) [route, allowed] = [{ revision, endpoint: 'start', projectId }, 'POST'];
    else if (seg.length === 5 && seg[4])
      [route, allowed] = [{ revision, endpoint: 'status', projectId, jobId: seg[4] }, 'GET'];
  } else if (revision === 1 && seg[0] === 'v1' && seg[1] === 'static-export' && seg[2] === 'jobs') {
    if (seg.length === 3) [route, allowed] = [{ endpoint: 'start' }, 'POST'];
    else if (seg.length === 4 && seg[3]) [route, allowed] = [{ endpoint: 'status', jobId: seg[3] }, 'GET'];
    else if (seg.length === 5 && seg[3] && seg[4] === 'bundle') {
      [route, allowed] = [{ endpoint: 'bundle', jobId: seg[3] }, 'POST'];
    }
  } else if (seg[0] === 'bundles' && link) {
    [route, allowed] = [{ endpoint: 'download', link }, 'GET'];
  }
  if (!route || !allowed) return new HttpError(404, `No such endpoint: ${method} ${path}`);
  if (!is(allowed))
    return new HttpError(405, `Method ${method} not allowed; use ${allowed}`, {}, { allow: allowed });
  return route;
}

/** The current revision's latest reference declares no body for a start's 400 and 404. */
function bodilessError(route: Route, status: number): boolean {
  return isExportV2(route) && route.endpoint === 'start' && (status === 400 || status === 404);
}

function isExportV2(route: Route): route is ExportV2Route {
  return 'revision' in route;
}

function isExportV1(route: Route): route is ExportV1Route {
  if (isExportV2(route)) return false;
  return route.endpoint === 'start' || route.endpoint === 'status' || route.endpoint === 'bundle';
}

class SimulatorServer implements Simulator {
  baseUrl = '';
  adminKey: string;
  readonly requests: RecordedRequest[] = [];
  private readonly nonEnterprise: Set<string>;
  private readonly readOnly: Set<string>;
  private readonly organizationKeys: Set<string>;
  private readonly apiRevision: ApiRevision;
  /** Read by the endpoints on each request; configure() changes it in place. */
  private readonly settings: ExportSettings & AgentSettings;
  private readonly clock: () => number;
  private readonly linkStyle: LinkStyle;
  private readonly requestsPerMinute: number | undefined;
  private readonly recentRequests = new Map<string, SlidingWindow>();
  private readonly faults: FaultTable;
  private readonly secret = randomBytes(32);
  private readonly logger: Logger | undefined;
  private readonly agentJobs: AgentJobs;
  private readonly exportJobs: ExportJobs;
  private readonly exportV2: ExportV2;
  private clockOffsetMs = 0;
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private linkBase = '';

  constructor(options: SimulatorOptions) {
    this.adminKey = options.adminKey ?? `mint_${randomBytes(24).toString('hex')}`;
    this.nonEnterprise = new Set(options.nonEnterpriseKeys ?? []);
    this.readOnly = new Set(options.readOnlyKeys ?? []);
    this.organizationKeys = new Set(options.organizationKeys ?? []);
    this.apiRevision = options.apiRevision ?? 1;
    this.settings = {
      docsDir: options.docsDir ?? DEFAULT_DOCS_DIR,
      exportDurationMs: options.exportDurationMs ?? 4000,
      exportProgress: options.exportProgress ?? 'linear',
      agentJobDurationMs: options.agentJobDurationMs ?? 2000,
      linkTtlSeconds: options.linkTtlSeconds ?? 900,
      padBytes: options.padBytes ?? 0,
    };
    this.clock = options.clock ?? Date.now;
    this.linkStyle = options.linkStyle ?? 'query';
    this.requestsPerMinute = options.requestsPerMinute || undefined;
    this.faults = new FaultTable(options.random ?? Math.random);
    this.faults.set(options.faults ?? []);
    this.logger = options.logger;
    this.linkBase = options.publicBaseUrl ?? '';
    const now = () => this.now();
    this.agentJobs = new AgentJobs(now, this.settings, options.rateLimitPerHour ?? 100);
    this.exportJobs = new ExportJobs({
      now,
      settings: this.settings,
      signLink: (jobId, expiresSec) => this.sign(jobId, expiresSec),
      logger: this.logger,
    });
    this.exportV2 = new ExportV2(this.exportJobs, now, options);
  }

  async listen(port: number, host: string): Promise<void> {
    await this.exportJobs.open();
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
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.exportJobs.close();
  }

  configure(settings: Partial<SimulatorSettings>): void {
    const { faults, adminKey, ...rest } = settings;
    // Faults first: a bad one throws before anything changed.
    if (faults !== undefined) this.faults.set(faults);
    if (adminKey !== undefined) this.adminKey = adminKey;
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined) Object.assign(this.settings, { [key]: value });
    }
  }
  advanceTime(ms: number): void {
    this.clockOffsetMs += ms;
  }
  now(): number {
    return this.clock() + this.clockOffsetMs;
  }
  exportJobsStarted(): number {
    return this.exportJobs.count();
  }
  agentJobsCreated(projectId?: string): number {
    return this.agentJobs.count(projectId);
  }
  exportJob(jobId: string): ExportJobSnapshot | undefined {
    return this.exportJobs.snapshot(jobId);
  }
  purgeExportJob(jobId: string): boolean {
    return this.exportJobs.purge(jobId);
  }
  signBundleUrl(jobId: string, expiresAtMs: number): string {
    return this.sign(jobId, Math.floor(expiresAtMs / 1000));
  }

  private sign(jobId: string, expiresSec: number): string {
    return signBundleUrl(this.linkBase, this.secret, jobId, expiresSec, this.linkStyle);
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
    let route: Route | HttpError | undefined;
    try {
      route = matchRoute(method, path, link, this.apiRevision);
      if (route instanceof HttpError) throw route;
      record.endpoint = route.endpoint;
      // Faults act before the endpoint does, so a faulted request has no side effects.
      const project =
        route.endpoint === 'download'
          ? this.exportJobs.get(route.link.jobId)?.projectId
          : 'projectId' in route
            ? route.projectId
            : undefined;
      const fault =
        route.endpoint === 'agent-archive' ? undefined : this.faults.decide(route.endpoint, project);
      if (fault?.applied.length) record.faults = fault.applied;
      if (fault?.delayMs) await wait(fault.delayMs);
      const action = fault?.action;
      if (action?.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'status') {
        // A 429 is the per-minute request limit's, in its wording: the hourly start limit is reached by starting.
        if (action.status === 429) throw new HttpError(429, TOO_MANY_REQUESTS, {}, { 'retry-after': '1' });
        throw new HttpError(action.status, `Injected fault: HTTP ${action.status}`);
      }
      if (route.endpoint === 'download') {
        const check = checkBundleLink(this.secret, route.link, this.now());
        const kind = action?.kind === 'malformed' || action?.kind === 'truncate' ? action.kind : undefined;
        await download(req, res, this.exportJobs, route.link, check, kind);
        return;
      }
      if (action?.kind === 'malformed') {
        const junk = '<html><body>502 Bad Gateway (injected malformed body)';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(junk);
        return;
      }
      const key = this.authorize(req);
      const siteFault = isSiteFault(action) ? action : undefined;
      let reply: Reply;
      if (isExportV2(route)) {
        reply = await this.exportV2.handle(
          route,
          req,
          this.access(key),
          siteFault,
          action?.kind === 'nolink',
        );
      } else if (isExportV1(route)) {
        if (!this.access(key).exportPlan) {
          throw new HttpError(
            403,
            'Static export is not enabled for this organization: it requires an Enterprise plan',
          );
        }
        reply = await exportV1(this.exportJobs, route, req, siteFault);
      } else {
        reply = await this.agentJobs.handle(route, req);
      }
      if (action?.kind === 'created') {
        // The job exists now; the answer says otherwise, as a gateway's may.
        if (action.answer === 'reset') {
          req.socket.destroy();
          return;
        }
        throw new HttpError(action.answer, `Injected fault: HTTP ${action.answer} after the job was created`);
      }
      sendJson(res, reply.status, reply.body);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) {
        if (route !== undefined && !(route instanceof HttpError) && bodilessError(route, err.status)) {
          res.writeHead(err.status, { ...err.headers, 'content-length': 0 });
          res.end();
          return;
        }
        sendJson(res, err.status, err.body, err.headers);
        return;
      }
      this.logger?.error({ err }, 'simulator internal error');
      sendJson(res, 500, { error: 'Internal server error' });
    }
  }

  /** The request's key, once it is known and within its per-minute limit. */
  private authorize(req: IncomingMessage): string {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer (\S+)$/.exec(header);
    const key = m?.[1];
    const known =
      key === this.adminKey ||
      (key !== undefined &&
        (this.organizationKeys.has(key) || this.nonEnterprise.has(key) || this.readOnly.has(key)));
    if (!key || !known) {
      throw new HttpError(401, 'Invalid or missing admin API key', {}, { 'www-authenticate': 'Bearer' });
    }
    if (this.requestsPerMinute !== undefined) {
      countInWindow(
        this.recentRequests,
        key,
        () => this.now(),
        MINUTE_MS,
        this.requestsPerMinute,
        TOO_MANY_REQUESTS,
      );
    }
    return key;
  }

  private access(key: string): KeyAccess {
    const admin = key === this.adminKey || this.organizationKeys.has(key);
    return {
      key,
      exportPlan: admin || !this.nonEnterprise.has(key),
      write: admin || !this.readOnly.has(key),
    };
  }
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = new SimulatorServer(options);
  try {
    await sim.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  } catch (error) {
    // Not listening (a port in use): remove the scratch space it made.
    await sim.close();
    throw error;
  }
  return sim;
}
