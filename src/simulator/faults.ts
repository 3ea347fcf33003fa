// Fault injection for the simulator: `endpoint:kind:rate[:times]`, e.g. `bundle:503:0.3`,
// `status:reset:1`, `start:delay=2000:0.5`, `status:malformed:1`, `download:truncate:0.5:2`.
// Content kinds on `start` let the job complete with a bad site: `start:empty:1:1` (an archive of
// directories only), `start:noindex:1` (no root index.html), `start:pages=2:1` (only 2 HTML pages).
// `status:nolink:1` answers a completed job of revision 2 without its link (bundleUrl, expiresAt).
// `start:fail:1` creates a job that ends failed. `start:created=502:1` (any 5xx, or `created=reset`)
// creates the job and then answers 502 (or drops the connection), as a gateway may after the service
// created it. An injected 429 answers as the per-minute request limit does (its wording, Retry-After: 1).
// `endpoint@project` limits a fault to one project's requests (revision 2's export endpoints, the
// downloads of its jobs, agent jobs): `status@6520f3a1c9b1a20012ab34ce:503:1`.

// The pattern, not the zod schema: the CLI's exit codes import FaultParseError, so this module is on
// every command's start-up path and must not load zod.
import { PROJECT_ID_PATTERN } from '../project.ts';

const PROJECT_ID = new RegExp(PROJECT_ID_PATTERN);

export const FAULT_ENDPOINTS = [
  'start',
  'status',
  'bundle',
  'download',
  'agent-create',
  'agent-get',
  'agent-message',
] as const;
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

export type FaultAction =
  | { kind: 'status'; status: number }
  | { kind: 'reset' }
  | { kind: 'delay'; ms: number }
  | { kind: 'malformed' }
  | { kind: 'truncate' }
  | { kind: 'nolink' }
  | { kind: 'created'; answer: number | 'reset' }
  | SiteFault;

/** How a faulted export's site is bad: the job completes with a bad site, or (`fail`) ends failed. */
export type SiteFault =
  | { kind: 'empty' }
  | { kind: 'noindex' }
  | { kind: 'pages'; pages: number }
  | { kind: 'fail' };

const SITE_FAULT_KINDS: ReadonlySet<string> = new Set(['empty', 'noindex', 'pages', 'fail']);

export function isSiteFault(action: FaultAction | undefined): action is SiteFault {
  return action !== undefined && SITE_FAULT_KINDS.has(action.kind);
}

export interface FaultSpec {
  endpoint: FaultEndpoint;
  /** Only requests for this project get the fault; all requests when absent. */
  project?: string;
  action: FaultAction;
  /** Probability 0..1 that a request to the endpoint gets the fault. */
  rate: number;
  /** Apply at most this many times (then the endpoint behaves normally); unlimited when absent. */
  times?: number;
}

export class FaultParseError extends Error {
  override name = 'FaultParseError';
}

const USAGE =
  'expected endpoint:kind:rate[:times] where endpoint is one of ' +
  `${FAULT_ENDPOINTS.join(', ')}, optionally @project for one project's requests; kind is an HTTP status (400-599), reset, delay=<ms>, malformed ` +
  'or truncate (download only); on start also fail, created=<5xx|reset>, empty, noindex, pages=<n>; rate is 0..1; ' +
  'times is an optional positive integer';

export function parseFault(text: string): FaultSpec {
  const fail = (why: string): never => {
    throw new FaultParseError(`Invalid fault "${text}": ${why} (${USAGE})`);
  };
  const parts = text.trim().split(':');
  if (parts.length < 3 || parts.length > 4) fail('wrong number of parts');
  const [scopeText = '', kindText = '', rateText = '', timesText] = parts;
  const at = scopeText.indexOf('@');
  const endpointText = at === -1 ? scopeText : scopeText.slice(0, at);
  const project = at === -1 ? undefined : scopeText.slice(at + 1);
  if (project !== undefined && !PROJECT_ID.test(project)) fail(`bad project "${project}"`);
  if (!(FAULT_ENDPOINTS as readonly string[]).includes(endpointText)) {
    fail(`unknown endpoint "${endpointText}"`);
  }
  const endpoint = endpointText as FaultEndpoint;
  let action: FaultAction;
  if (/^\d{3}$/.test(kindText)) {
    const status = Number(kindText);
    if (status < 400 || status > 599) fail(`status ${status} is not an error status`);
    action = { kind: 'status', status };
  } else if (
    kindText === 'reset' ||
    kindText === 'malformed' ||
    kindText === 'truncate' ||
    kindText === 'nolink'
  ) {
    action = { kind: kindText };
  } else if (kindText === 'empty' || kindText === 'noindex' || kindText === 'fail') {
    action = { kind: kindText };
  } else if (kindText.startsWith('created=')) {
    const answer = kindText.slice('created='.length);
    const status = Number(answer);
    if (answer !== 'reset' && !(/^\d{3}$/.test(answer) && status >= 500 && status <= 599)) {
      fail('created= takes a 5xx status or reset: the answer sent after the job was created');
    }
    action = { kind: 'created', answer: answer === 'reset' ? 'reset' : status };
  } else if (kindText.startsWith('pages=')) {
    const pages = Number(kindText.slice('pages='.length));
    if (!Number.isInteger(pages) || pages < 1) fail('pages must be a positive integer');
    action = { kind: 'pages', pages };
  } else if (kindText.startsWith('delay=')) {
    const ms = Number(kindText.slice('delay='.length));
    if (!Number.isInteger(ms) || ms < 0) fail('delay must be a non-negative integer of milliseconds');
    action = { kind: 'delay', ms };
  } else {
    return fail(`unknown kind "${kindText}"`);
  }
  if (action.kind === 'truncate' && endpoint !== 'download') fail('truncate only applies to download');
  if (action.kind === 'nolink' && endpoint !== 'status') fail('nolink only applies to status');
  if ((isSiteFault(action) || action.kind === 'created') && endpoint !== 'start') {
    fail(`${kindText} only applies to start`);
  }
  const rate = Number(rateText);
  if (rateText === '' || !Number.isFinite(rate) || rate < 0 || rate > 1) fail('rate must be between 0 and 1');
  const spec: FaultSpec = { endpoint, action, rate };
  if (project !== undefined) spec.project = project;
  if (timesText !== undefined) {
    const times = Number(timesText);
    if (!Number.isInteger(times) || times < 1) fail('times must be a positive integer');
    spec.times = times;
  }
  return spec;
}

export function formatFault(spec: FaultSpec): string {
  const a = spec.action;
  const kind =
    a.kind === 'status'
      ? String(a.status)
      : a.kind === 'delay'
        ? `delay=${a.ms}`
        : a.kind === 'pages'
          ? `pages=${a.pages}`
          : a.kind === 'created'
            ? `created=${a.answer}`
            : a.kind;
  const scope = spec.project === undefined ? spec.endpoint : `${spec.endpoint}@${spec.project}`;
  return `${scope}:${kind}:${spec.rate}${spec.times === undefined ? '' : `:${spec.times}`}`;
}

/** Which faults fire for one request: the sum of firing delays, then at most one other action. */
interface FaultDecision {
  delayMs: number;
  action?: Exclude<FaultAction, { kind: 'delay' }>;
  applied: string[];
}

/** Holds the active faults and how often each has fired (for `times`). */
export class FaultTable {
  private entries: Array<{ spec: FaultSpec; used: number }> = [];
  private readonly random: () => number;

  constructor(random: () => number) {
    this.random = random;
  }

  set(faults: ReadonlyArray<FaultSpec | string>): void {
    this.entries = faults.map((f) => ({ spec: typeof f === 'string' ? parseFault(f) : f, used: 0 }));
  }

  list(): FaultSpec[] {
    return this.entries.map((e) => e.spec);
  }

  /** `project`: the project the request is for, if any. */
  decide(endpoint: FaultEndpoint, project: string | undefined): FaultDecision {
    const decision: FaultDecision = { delayMs: 0, applied: [] };
    for (const entry of this.entries) {
      const { spec } = entry;
      if (spec.endpoint !== endpoint) continue;
      if (spec.project !== undefined && spec.project !== project) continue;
      if (spec.times !== undefined && entry.used >= spec.times) continue;
      if (spec.action.kind !== 'delay' && decision.action) continue;
      // rate 1 always fires and rate 0 never does, whatever the random source returns.
      if (spec.rate < 1 && !(this.random() < spec.rate)) continue;
      entry.used++;
      decision.applied.push(formatFault(spec));
      if (spec.action.kind === 'delay') decision.delayMs += spec.action.ms;
      else decision.action = spec.action;
    }
    return decision;
  }
}
