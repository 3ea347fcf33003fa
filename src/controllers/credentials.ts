// The admin API key comes from a Secret in the resource's namespace; clients are cached per
// (base URL, key) so a key rotation in the Secret takes effect at the next reconcile, and closed
// once unused: soon after their Secret changed (a rotated-out key), or after a long idle time.

import { apiBaseUrlRefusal } from '../api/base-url-policy.ts';
import {
  AdminApiClient,
  type AdminApiClientOptions,
  AdminKeyError,
  AgentJobBudget,
  validateAdminKey,
} from '../api/index.ts';
import type { Logger } from '../log.ts';
import { registerSecret } from '../redact.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import { readSecretKey, type SecretReads } from '../secrets/read-secret.ts';
import { type LongTimer, setLongInterval } from '../timers.ts';
import { type Failure, failure } from './failures.ts';

export interface Credentials {
  baseUrl: string;
  apiKey: string;
  /** The Secret the key was read from, `namespace/name`. */
  secret: string;
}

/** Anything with credentials: StaticExportRelease and AgentJob. */
export interface UsesCredentials {
  metadata: { namespace?: string };
  /** Absent on a StaticExportRelease with a registry source (it never calls the admin API). */
  spec: { credentialsSecretRef?: { name: string; key: string } | undefined; apiBaseUrl?: string | undefined };
}

/** The credentials Secret as messages name it: `ns/name (key apiKey)`. */
export function secretRefText(resource: UsesCredentials): string {
  const ref = resource.spec.credentialsSecretRef;
  if (!ref) return 'none (spec.credentialsSecretRef is not set)';
  return `${resource.metadata.namespace}/${ref.name} (key ${ref.key})`;
}

interface CredentialDefaults {
  /** For resources without spec.apiBaseUrl; always allowed. */
  apiBaseUrl?: string;
  keyPrefix?: string;
  /** Further base URLs a resource may name in spec.apiBaseUrl. */
  allowedApiBaseUrls?: readonly string[];
  /** Plain http to hosts other than loopback. */
  allowInsecureApiBaseUrl?: boolean;
}

/**
 * The key and where to send it, or why not. The base URL is checked before the Secret is read:
 * a refused spec.apiBaseUrl learns nothing about the Secret either.
 */
export async function readCredentials(
  kube: KubeClient,
  resource: UsesCredentials,
  defaults: CredentialDefaults,
  /** The Secret from the operator's cache when it is known current; a GET otherwise. */
  secrets?: SecretReads,
): Promise<Credentials | { failure: Failure }> {
  const namespace = resource.metadata.namespace ?? '';
  const ref = resource.spec.credentialsSecretRef;
  if (!ref) {
    return {
      failure: failure(
        'NoCredentials',
        'spec.credentialsSecretRef is not set: name the Secret with the admin API key',
        true,
      ),
    };
  }
  const baseUrl = resource.spec.apiBaseUrl ?? defaults.apiBaseUrl;
  if (!baseUrl) {
    return {
      failure: failure(
        'NoApiBaseUrl',
        'No admin API base URL: set spec.apiBaseUrl or start the operator with --api-base-url',
        true,
      ),
    };
  }
  const refusal = apiBaseUrlRefusal(
    baseUrl,
    resource.spec.apiBaseUrl === undefined ? 'The operator flag --api-base-url' : 'spec.apiBaseUrl',
    {
      allowed: [
        ...(defaults.apiBaseUrl ? [defaults.apiBaseUrl] : []),
        ...(defaults.allowedApiBaseUrls ?? []),
      ],
      allowInsecure: defaults.allowInsecureApiBaseUrl ?? false,
    },
  );
  if (refusal) return { failure: failure('ApiBaseUrlNotAllowed', refusal, true) };
  const read = await readSecretKey(
    kube,
    namespace,
    ref,
    'spec.credentialsSecretRef',
    'the admin API key',
    secrets,
  );
  if ('failure' in read) return read;
  const raw = read.value;
  const apiKey = Buffer.from(raw, 'base64').toString('utf8').trim();
  registerSecret(apiKey);
  try {
    validateAdminKey(apiKey, defaults.keyPrefix);
  } catch (e) {
    const why = e instanceof AdminKeyError ? e.message : String(e);
    return {
      failure: failure(
        'InvalidCredentials',
        `The value under ${ref.key} in Secret ${namespace}/${ref.name} is not an admin API key: ${why}`,
        true,
        5 * 60_000,
      ),
    };
  }
  return { baseUrl, apiKey, secret: `${namespace}/${ref.name}` };
}

interface ApiClientsOptions {
  logger: Logger;
  apiBaseUrl?: string;
  keyPrefix?: string;
  /** Shared by every AgentJob of a project, whatever client creates it. */
  budget?: AgentJobBudget;
  onCall?: AdminApiClientOptions['onCall'];
  retry?: AdminApiClientOptions['retry'];
  timeouts?: AdminApiClientOptions['timeouts'];
  /** Per API base URL and key (one client each); unlimited when absent. */
  requestsPerMinute?: number;
  /** See CredentialDefaults. */
  allowedApiBaseUrls?: readonly string[];
  allowInsecureApiBaseUrl?: boolean;
  /** A client unused this long is closed. Default 10 min. */
  idleMs?: number;
  now?: () => number;
}

/**
 * A client whose Secret changed and that no reconcile asked for since is closed once unused this
 * long: the per-minute request limit's window, so a new client for the same key keeps the limit.
 */
const STALE_AFTER_MS = 60_000;
const SWEEP_EVERY_MS = 30_000;

interface CachedClient {
  client: AdminApiClient;
  /** Secrets (`namespace/name`) this key was read from since their last change. */
  secrets: Set<string>;
  usedAt: number;
}

export class ApiClients {
  readonly options: ApiClientsOptions;
  readonly budget: AgentJobBudget;
  private readonly cache = new Map<string, CachedClient>();
  private readonly now: () => number;
  private readonly sweeper: LongTimer;

  constructor(options: ApiClientsOptions) {
    this.options = options;
    this.budget = options.budget ?? new AgentJobBudget();
    this.now = options.now ?? Date.now;
    this.sweeper = setLongInterval(() => void this.sweep(), SWEEP_EVERY_MS, { unref: true });
  }

  get defaults(): CredentialDefaults {
    const o = this.options;
    return {
      ...(o.apiBaseUrl ? { apiBaseUrl: o.apiBaseUrl } : {}),
      ...(o.keyPrefix ? { keyPrefix: o.keyPrefix } : {}),
      ...(o.allowedApiBaseUrls ? { allowedApiBaseUrls: o.allowedApiBaseUrls } : {}),
      ...(o.allowInsecureApiBaseUrl ? { allowInsecureApiBaseUrl: true } : {}),
    };
  }

  get(creds: Credentials): AdminApiClient {
    const id = `${creds.baseUrl}\u0000${creds.apiKey}`;
    const cached = this.cache.get(id);
    if (cached) {
      cached.usedAt = this.now();
      cached.secrets.add(creds.secret);
      return cached.client;
    }
    const client = new AdminApiClient({
      baseUrl: creds.baseUrl,
      apiKey: creds.apiKey,
      logger: this.options.logger,
      agentJobBudget: this.budget,
      ...(this.options.keyPrefix ? { keyPrefix: this.options.keyPrefix } : {}),
      ...(this.options.onCall ? { onCall: this.options.onCall } : {}),
      ...(this.options.retry ? { retry: this.options.retry } : {}),
      ...(this.options.timeouts ? { timeouts: this.options.timeouts } : {}),
      ...(this.options.requestsPerMinute ? { requestsPerMinute: this.options.requestsPerMinute } : {}),
    });
    this.cache.set(id, { client, secrets: new Set([creds.secret]), usedAt: this.now() });
    return client;
  }

  /** Per key and base URL (by the client's non-secret key id): the requests its per-minute limit still allows now. */
  requestBudgets(): Map<string, number> {
    const left = new Map<string, number>();
    for (const { client } of this.cache.values()) {
      const remaining = client.requestsRemaining();
      if (remaining !== undefined) left.set(client.keyId, remaining);
    }
    return left;
  }

  /** A key Secret changed or was deleted: its clients are closed unless a reconcile reads the same key again. */
  secretChanged(namespace: string, name: string): void {
    for (const c of this.cache.values()) c.secrets.delete(`${namespace}/${name}`);
  }

  /** Closes the clients that are not in use and stale (see STALE_AFTER_MS) or idle. */
  async sweep(): Promise<void> {
    const now = this.now();
    const evicted: AdminApiClient[] = [];
    for (const [id, c] of this.cache) {
      if (c.client.busy) continue;
      const quietMs = now - c.usedAt;
      if (
        (c.secrets.size === 0 && quietMs >= STALE_AFTER_MS) ||
        quietMs >= (this.options.idleMs ?? 600_000)
      ) {
        this.cache.delete(id);
        evicted.push(c.client);
      }
    }
    await this.closeAll(evicted);
  }

  async close(): Promise<void> {
    this.sweeper.clear();
    const all = [...this.cache.values()].map((c) => c.client);
    this.cache.clear();
    await this.closeAll(all);
  }

  private async closeAll(clients: AdminApiClient[]): Promise<void> {
    const results = await Promise.allSettled(clients.map((c) => c.close()));
    for (const r of results)
      if (r.status === 'rejected')
        this.options.logger.warn({ err: r.reason }, 'closing an admin API client failed');
  }
}
