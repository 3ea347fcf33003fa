// The StaticExportRelease controller's wiring: its informers and indexes, and what else it watches
// with how each change maps to releases.
import { API_GROUP, GROUP_VERSION, SER_KIND, SER_PLURAL, type StaticExportRelease } from '../../crd/index.ts';
import {
  allKeys,
  type Controller,
  ignoreStatusOnly,
  ownerKeys,
  referrerKeys,
  refIndex,
} from '../../runtime/controller.ts';
import type { KubeObject } from '../../runtime/informer.ts';
import { VALUES_SECRET_LABEL, WORKLOAD_KINDS } from '../../targets/workloads.ts';
import type { Wiring } from '../wiring.ts';
import { seedStartBudgets } from './budget/start-budget-seed.ts';
import { siteKey } from './export/export-site.ts';
import type { ReleaseReconcilerOptions } from './release-options.ts';
import { StaticExportReleaseReconciler } from './release-reconciler.ts';
import { SharedExports } from './share/shared-exports.ts';

type Release = StaticExportRelease & KubeObject;

// Index names: releases by the Secrets they read (the admin key; a registry's login, CA or public
// key; a Git token) and write (values), releases and labelled workloads by the values Secret, releases by site.
const KEY_SECRET = 'keySecret';
const REGISTRY_SECRET = 'registrySecret';
const GIT_SECRET = 'gitSecret';
const VALUES_SECRET = 'valuesSecret';
const SITE = 'site';

type ReleaseSetupOptions = Omit<
  ReleaseReconcilerOptions,
  'reads' | 'releasesOfSite' | 'labelledWorkloads' | 'shared' | 'budgetSeeded'
>;

export function setupReleases(w: Wiring, options: ReleaseSetupOptions): Controller {
  const releases = w.informer<Release>(GROUP_VERSION, SER_PLURAL);
  releases.addIndex(
    KEY_SECRET,
    refIndex<Release>((r) => r.spec.credentialsSecretRef?.name),
  );
  releases.addIndex(REGISTRY_SECRET, (r) => {
    const oci = r.spec.source?.oci;
    return [oci?.credentialsSecretRef?.name, oci?.caSecretRef?.name, oci?.verify?.publicKeySecretRef.name]
      .filter((n): n is string => n !== undefined)
      .map((n) => `${r.metadata.namespace}/${n}`);
  });
  releases.addIndex(GIT_SECRET, (r) =>
    [r.spec.gitWriteBack?.secretRef?.name, r.spec.gitWriteBack?.signingKey?.secretRef.name]
      .filter((n): n is string => n !== undefined)
      .map((n) => `${r.metadata.namespace}/${n}`),
  );
  releases.addIndex(
    VALUES_SECRET,
    refIndex<Release>((r) => r.spec.target?.valuesSecret?.name),
  );
  // Across namespaces: a release about to export finds the job another release of its site records.
  releases.addIndex(SITE, (r) => {
    const site = r.spec ? siteKey(r.spec) : undefined;
    return typeof site === 'string' ? [site] : [];
  });

  // The site chart's workloads, by the label naming the Secret they read (metadata only): one
  // installed or changed (helm upgrade) is rolled or checked at once, not at the next renewal.
  const workloads = WORKLOAD_KINDS.map((kind) => {
    const informer = w.informer<KubeObject>('apps/v1', `${kind.toLowerCase()}s`, {
      client: w.kube.metadataOnly(),
      labelSelector: VALUES_SECRET_LABEL,
    });
    informer.addIndex(
      VALUES_SECRET,
      refIndex((o) => o.metadata.labels?.[VALUES_SECRET_LABEL]),
    );
    return { kind, informer };
  });

  // The share groups of this term of leadership (rebuilt from the releases' status by the next): a
  // group's releases are woken when its export starts or ends.
  const shared = new SharedExports({ wake: (key) => controller.enqueue(key) });
  // The start budgets outlive a term (this process's own starts stay counted); a waiter whose slot
  // came free early is woken by this term's controller.
  options.budgets.onWake((key) => controller.enqueue(key));
  const reads = w.reads(releases, GROUP_VERSION, SER_PLURAL);
  const budgetSeeded = releases
    .waitForSync()
    .then(() => seedStartBudgets(options, releases.list(), reads.secrets));
  const reconciler = new StaticExportReleaseReconciler({
    ...options,
    shared,
    reads,
    budgetSeeded,
    releasesOfSite: (site) => (releases.hasSynced() ? releases.byIndex(SITE, site) : undefined),
    labelledWorkloads: (kind, namespace, valuesSecret) =>
      workloads.some(
        (x) =>
          x.kind === kind &&
          (!x.informer.hasSynced() ||
            x.informer.byIndex(VALUES_SECRET, `${namespace}/${valuesSecret}`).length > 0),
      ),
  });

  // A workload's label names the Secret: the releases writing it are its readers.
  const readers = referrerKeys(releases, VALUES_SECRET);
  const readersOf = (o: KubeObject) =>
    readers({
      metadata: { namespace: o.metadata.namespace, name: o.metadata.labels?.[VALUES_SECRET_LABEL] ?? '' },
    });
  const builder = w
    .controller('staticexportrelease')
    .for(releases, ignoreStatusOnly)
    .watches(
      w.secrets,
      allKeys(
        ownerKeys(SER_KIND, API_GROUP),
        referrerKeys(releases, KEY_SECRET),
        referrerKeys(releases, REGISTRY_SECRET),
        referrerKeys(releases, GIT_SECRET),
      ),
    );
  for (const x of workloads) builder.watches(x.informer, readersOf, ignoreStatusOnly);
  const controller = builder.complete((ns, n, signal) => reconciler.reconcile(ns, n, signal));
  return controller;
}
