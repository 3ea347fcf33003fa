// What OpenShift's restricted-v2 SCC does to a pod admitted into a namespace, as a Helm post-renderer
// (helm install --post-renderer test/support/tools/restricted-scc.sh): every pod runs as the namespace's
// arbitrary uid with group 0 and that uid as fsGroup, whatever the image's USER says. The charts
// with `openshift` set no ids, so nothing here conflicts with theirs; an id they set would be
// overwritten here, where the SCC would refuse the pod: the chart tests check they set none.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The first uid of a namespace's range, as OpenShift assigns them (openshift.io/sa.scc.uid-range). */
export const OPENSHIFT_UID = 1000680000;
export const SCC_POD_SECURITY = { runAsUser: OPENSHIFT_UID, runAsGroup: 0, fsGroup: OPENSHIFT_UID };
/** The executable to pass to `helm --post-renderer` (Helm 3: Helm 4 takes post-renderers as plugins only). */
export const RESTRICTED_SCC_POST_RENDERER = join(import.meta.dirname, 'restricted-scc.sh');

interface PodSpec {
  securityContext?: Record<string, unknown>;
}
interface Manifest {
  kind?: string;
  spec?: PodSpec & {
    template?: { spec?: PodSpec };
    jobTemplate?: { spec?: { template?: { spec?: PodSpec } } };
  };
}

function podSpecOf(m: Manifest): PodSpec | undefined {
  if (m.kind === 'Pod') return m.spec;
  if (m.kind === 'CronJob') return m.spec?.jobTemplate?.spec?.template?.spec;
  return m.spec?.template?.spec;
}

/** The manifests with the SCC's ids on every pod. */
export function admitRestricted(manifests: string): string {
  return parseAllDocuments(manifests)
    .map((doc) => {
      const m = doc.toJS() as Manifest | null;
      const pod = m && podSpecOf(m);
      if (pod) pod.securityContext = { ...pod.securityContext, ...SCC_POD_SECURITY };
      return m ? `---\n${JSON.stringify(m)}\n` : '';
    })
    .join('');
}

if (process.argv[1] === import.meta.filename) process.stdout.write(admitRestricted(readFileSync(0, 'utf8')));
