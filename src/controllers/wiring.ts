// What the controllers' setups share while this process leads: how an informer is made (the
// watched namespaces, watchdog, metrics), how a controller is built (workers, queue), the Secrets'
// metadata informer both kinds watch, and reads served from those caches.
import type { Logger } from '../log.ts';
import { ControllerBuilder } from '../runtime/builder.ts';
import { CachedReader, type CacheSource } from '../runtime/cached-reader.ts';
import { Informer, type KubeObject, type ListWatchClient, resourceName } from '../runtime/informer.ts';
import { type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { WorkQueueOptions } from '../runtime/work-queue.ts';
import type { OwnedObject } from '../targets/owned.ts';
import type { CachedReads } from './reconciler-base.ts';

type Lifecycle = Pick<Informer<KubeObject>, 'start' | 'stop' | 'hasSynced'>;
type Made = Lifecycle & Pick<Informer<KubeObject>, 'resource' | 'list'>;

interface WiringOptions {
  kube: KubeClient;
  logger: Logger;
  metrics: Metrics;
  /** Namespaces to watch; empty for all. */
  namespaces: string[];
  /** Parallel reconciles per controller. */
  concurrency: number;
  queue?: WorkQueueOptions;
  watchdogMs?: number;
  resyncMs?: number;
}

export class Wiring {
  readonly kube: KubeClient;
  /** Secrets' metadata only (never their data): both kinds act on a Secret created or fixed. */
  readonly secrets: Informer<KubeObject>;
  private readonly o: WiringOptions;
  private readonly made: Made[] = [];
  private readonly secretReads: CachedReader<KubeObject & OwnedObject>;

  constructor(options: WiringOptions) {
    this.o = options;
    this.kube = options.kube;
    this.secrets = this.informer('v1', 'secrets', { client: options.kube.metadataOnly() });
    this.secretReads = new CachedReader<KubeObject & OwnedObject>({
      informer: this.secrets,
      full: false,
      fetch: (ns, n, signal) => this.kube.get(resourcePath('v1', 'secrets', ns, n), signal),
    });
  }

  /** An informer over the watched namespaces, started and stopped with the others. */
  informer<T extends KubeObject>(
    apiVersion: string,
    plural: string,
    o: { client?: ListWatchClient; labelSelector?: string } = {},
  ): Informer<T> {
    const informer = new Informer<T>({
      client: o.client ?? this.kube,
      apiVersion,
      plural,
      namespaces: this.o.namespaces,
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
      logger: this.o.logger,
      metrics: this.o.metrics,
      ...(this.o.watchdogMs ? { watchdogMs: this.o.watchdogMs } : {}),
      ...(this.o.resyncMs ? { resyncMs: this.o.resyncMs } : {}),
    });
    this.made.push(informer);
    return informer;
  }

  controller(name: string): ControllerBuilder {
    return new ControllerBuilder({
      name,
      concurrency: this.o.concurrency,
      logger: this.o.logger,
      metrics: this.o.metrics,
      ...(this.o.queue ? { queue: this.o.queue } : {}),
    });
  }

  /** Reads of a controller's own kind from `own`'s cache, and of Secrets (one GET each before). */
  reads(own: CacheSource, apiVersion: string, plural: string): CachedReads {
    return {
      objects: new CachedReader<KubeObject>({
        informer: own,
        full: true,
        fetch: (ns, n, signal) => this.kube.get(resourcePath(apiVersion, plural, ns, n), signal),
      }),
      secrets: this.secretReads,
    };
  }

  /** The cache of the informer a setup made for a resource, for reads such as metrics. */
  cacheOf<T extends KubeObject>(apiVersion: string, plural: string): { list(): T[] } | undefined {
    const resource = resourceName(apiVersion, plural);
    return this.made.find((i) => i.resource === resource) as { list(): T[] } | undefined;
  }

  /** Every informer made here. */
  get informers(): readonly Lifecycle[] {
    return this.made;
  }
}
