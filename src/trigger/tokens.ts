// Trigger tokens, read from their Secrets for releases the receiver knows. A read is used for
// TOKEN_TTL_MS and calls arriving meanwhile share one read in flight: calls for a release, forged
// or not, cost at most one Secret read per TOKEN_TTL_MS, and no budget a valid call needs.
import { registerSecret } from '../redact.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { normalizeToken } from './contract.ts';
import type { TokenSecretRef } from './releases.ts';

/** How long a token read is used: a rotated token is taken within this. */
export const TOKEN_TTL_MS = 10_000;
/** Past this many reads kept, expired ones are dropped (refs of releases deleted meanwhile). */
const PRUNE_AT = 10_000;

/** The token, or why there is none (for the log: the caller only learns the call was refused). */
export type Token = { token: string } | { missing: string };

export class Tokens {
  private readonly kube: Pick<KubeClient, 'get'>;
  private readonly now: () => number;
  private readonly kept = new Map<string, { token: Token; until: number }>();
  private readonly reading = new Map<string, Promise<Token>>();

  constructor(kube: Pick<KubeClient, 'get'>, now: () => number) {
    this.kube = kube;
    this.now = now;
  }

  /** The token `ref` names in `namespace`; rejects when the Secret could not be read. */
  of(namespace: string, ref: TokenSecretRef): Promise<Token> {
    const key = `${namespace}/${ref.name}/${ref.key}`;
    const kept = this.kept.get(key);
    if (kept && kept.until > this.now()) return Promise.resolve(kept.token);
    let reading = this.reading.get(key);
    if (!reading) {
      reading = this.read(namespace, ref)
        .then((token) => {
          this.keep(key, token);
          return token;
        })
        .finally(() => this.reading.delete(key));
      this.reading.set(key, reading);
    }
    return reading;
  }

  private keep(key: string, token: Token): void {
    const now = this.now();
    if (this.kept.size >= PRUNE_AT) for (const [k, t] of this.kept) if (t.until <= now) this.kept.delete(k);
    this.kept.set(key, { token, until: now + TOKEN_TTL_MS });
  }

  private async read(namespace: string, ref: TokenSecretRef): Promise<Token> {
    const secret = `Secret ${namespace}/${ref.name}`;
    let data: Record<string, string> | undefined;
    try {
      ({ data } = await this.kube.get<{ data?: Record<string, string> }>(
        resourcePath('v1', 'secrets', namespace, ref.name),
      ));
    } catch (e) {
      if (isNotFound(e)) return { missing: `${secret} does not exist` };
      throw e;
    }
    const raw = data?.[ref.key];
    if (raw === undefined) return { missing: `${secret} has no key ${ref.key}` };
    const token = normalizeToken(Buffer.from(raw, 'base64').toString('utf8'));
    if (!token) return { missing: `${secret} key ${ref.key} is empty` };
    registerSecret(token);
    return { token };
  }
}
