// What `static-export check` asks the API server's authorizer (access reviews) and how it judges the
// answers: the caller may do what `status` and `trigger --wait` do, and the operator's ServiceAccount
// what the operator does (the operator chart's rules, charts/static-export-operator/templates/_helpers.tpl).
import { API_GROUP } from '../crd/common.ts';
import type { CheckResult } from './cluster-checks.ts';

export interface Permission {
  group: string;
  resource: string;
  verb: string;
  namespace: string;
}

const SER = { group: API_GROUP, resource: 'staticexportreleases' };

/** What `status` (list, get) and `trigger --wait` (get) read in `namespace`. */
export function callerNeeds(namespace: string): Permission[] {
  return ['list', 'get'].map((verb) => ({ ...SER, verb, namespace }));
}

const OPERATOR_RULES: { group: string; resources: string[]; verbs: string[] }[] = [
  { group: API_GROUP, resources: ['staticexportreleases', 'agentjobs'], verbs: ['get', 'list', 'watch'] },
  { group: API_GROUP, resources: ['staticexportreleases/status', 'agentjobs/status'], verbs: ['patch'] },
  { group: '', resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
  { group: 'events.k8s.io', resources: ['events'], verbs: ['create', 'patch'] },
  { group: API_GROUP, resources: ['staticexportreleases/finalizers'], verbs: ['update'] },
  { group: 'apps', resources: ['deployments', 'statefulsets'], verbs: ['get', 'list', 'watch', 'patch'] },
  { group: '', resources: ['pods'], verbs: ['list'] },
];

/**
 * What the operator needs whatever its releases' targets are, in a namespace whose releases it serves,
 * and its leader election Lease in its own. The Flux and Argo CD targets' rules and the trigger
 * receiver's patch are left out: only releases using them need them. The operator chart's rules
 * are these and those (test/tools/chart/operator-chart.test.ts keeps them in step).
 */
export function operatorNeeds(releaseNamespace: string, operatorNamespace: string): Permission[] {
  return [
    ...OPERATOR_RULES.flatMap((r) =>
      r.resources.flatMap((resource) =>
        r.verbs.map((verb) => ({ group: r.group, resource, verb, namespace: releaseNamespace })),
      ),
    ),
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: operatorNamespace },
  ];
}

/** The body of a SelfSubjectAccessReview (`user` undefined) or a SubjectAccessReview for `user`. */
export function accessReview(p: Permission, serviceAccount?: { namespace: string; name: string }): object {
  const [resource, subresource] = p.resource.split('/');
  const resourceAttributes = {
    group: p.group,
    resource,
    ...(subresource ? { subresource } : {}),
    verb: p.verb,
    namespace: p.namespace,
  };
  if (!serviceAccount)
    return {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes },
    };
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
      groups: [
        'system:serviceaccounts',
        `system:serviceaccounts:${serviceAccount.namespace}`,
        'system:authenticated',
      ],
      resourceAttributes,
    },
  };
}

const named = (p: Permission) => `${p.verb} ${p.resource}${p.group ? `.${p.group}` : ''} in ${p.namespace}`;

/** The caller's permissions, `allowed[i]` answering `needs[i]`. */
export function callerRbacCheck(needs: Permission[], allowed: boolean[]): CheckResult {
  const check = 'RBAC: you (status, trigger --wait)';
  const missing = needs.filter((_, i) => !allowed[i]);
  if (missing.length === 0) return { check, ok: true, message: `may ${needs.map(named).join(', ')}` };
  const ns = missing[0]?.namespace ?? 'default';
  return {
    check,
    ok: false,
    message: `may not ${missing.map(named).join(', ')}: ask for the view ClusterRole in ${ns} (the operator chart aggregates reading releases into it; or bind the chart's <fullname>-view ClusterRole), e.g. kubectl create rolebinding static-export-view -n ${ns} --clusterrole=view --user=<you>`,
  };
}

/** The operator ServiceAccount's permissions, `allowed[i]` answering `needs[i]`. */
export function operatorRbacCheck(
  serviceAccount: { namespace: string; name: string },
  needs: Permission[],
  allowed: boolean[],
): CheckResult {
  const check = `RBAC: operator ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name}`;
  const missing = needs.filter((_, i) => !allowed[i]);
  if (missing.length === 0)
    return { check, ok: true, message: `has the ${needs.length} permissions it needs` };
  return {
    check,
    ok: false,
    message: `may not ${missing.map(named).join(', ')}: install the operator chart with rbac.create=true (with watchNamespaces, list the releases' namespace there), or grant what the RBAC section of the chart's README lists; with another ServiceAccount name, pass --operator-service-account`,
  };
}

export const OPERATOR_RBAC_SKIPPED = (serviceAccount: { namespace: string; name: string }): CheckResult => ({
  check: `RBAC: operator ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name}`,
  ok: true,
  skipped: true,
  message:
    'not checked: you may not create subjectaccessreviews.authorization.k8s.io; run check as a cluster admin to include it',
});
