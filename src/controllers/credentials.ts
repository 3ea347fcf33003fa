// The admin API key comes from a Secret in the resource's namespace; clients are cached per
// (base URL, key) so a key rotation in the Secret takes effect at the next reconcile.
import {
  AdminApiClient,
  type AdminApiClientOptions,
  AdminKeyError,
  AgentJobBudget,
  validateAdminKey,
} from '../api/index.ts';
import type { Logger } from '../log.ts';
import { registerSecret } from '../redact.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { type Failure, failure } from './failures.ts';

export interface Credentials {
  baseUrl: string;
  apiKey: string;
}

const RETRY_MISSING_SECRET_MS = 30_000;

/** Anything with credentials: StaticExportRelease and AgentJob. */
export interface UsesCredentials {
  metadata: { namespace?: string };
  spec: { credentialsSecretRef: { name: string; key: string }; apiBaseUrl?: string };
}

/** The credentials Secret as messages name it: `ns/name (key apiKey)`. */
export function secretRefText(resource: UsesCredentials): string {
  const ref = resource.spec.credentialsSecretRef;
  return `${resource.metadata.namespace}/${ref.name} (key ${ref.key})`;
}

export async function readCredentials(
  kube: KubeClient,
  resource: UsesCredentials,
  defaults: { apiBaseUrl?: string; keyPrefix?: string },
): Promise<Credentials | { failure: Failure }> {
  const namespace = resource.metadata.namespace ?? '';
  const ref = resource.spec.credentialsSecretRef;
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
  let data: Record<string, string> | undefined;
  try {
    data = (
      await kube.get<{ data?: Record<string, string> }>(resourcePath('v1', 'secrets', namespace, ref.name))
    ).data;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return {
      failure: failure(
        'SecretNotFound',
        `Secret ${namespace}/${ref.name} named in spec.credentialsSecretRef does not exist: create it with the admin API key under key ${ref.key}`,
        true,
        RETRY_MISSING_SECRET_MS,
      ),
    };
  }
  const raw = data?.[ref.key];
  if (raw === undefined) {
    const keys = Object.keys(data ?? {}).join(', ') || 'none';
    return {
      failure: failure(
        'SecretKeyNotFound',
        `Secret ${namespace}/${ref.name} has no key ${ref.key} (keys: ${keys}): set spec.credentialsSecretRef.key or add the key`,
        true,
        RETRY_MISSING_SECRET_MS,
      ),
    };
  }
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
  return { baseUrl, apiKey };
}

export interface ApiClientsOptions {
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
}

export class ApiClients {
  readonly options: ApiClientsOptions;
  readonly budget: AgentJobBudget;
  private readonly cache = new Map<string, AdminApiClient>();

  constructor(options: ApiClientsOptions) {
    this.options = options;
    this.budget = options.budget ?? new AgentJobBudget();
  }

  get defaults() {
    return {
      ...(this.options.apiBaseUrl ? { apiBaseUrl: this.options.apiBaseUrl } : {}),
      ...(this.options.keyPrefix ? { keyPrefix: this.options.keyPrefix } : {}),
    };
  }

  get(creds: Credentials): AdminApiClient {
    const id = `${creds.baseUrl}\u0000${creds.apiKey}`;
    let client = this.cache.get(id);
    if (!client) {
      client = new AdminApiClient({
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
      this.cache.set(id, client);
    }
    return client;
  }

  async close(): Promise<void> {
    await Promise.all([...this.cache.values()].map((c) => c.close()));
    this.cache.clear();
  }
}
