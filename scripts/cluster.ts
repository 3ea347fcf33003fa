// `npm run cluster:up` starts the local control plane in .cluster/ and prints its KUBECONFIG path
// (`-- --node` adds the real node, where pods run, with the project's image pullable there);
// `npm run cluster:down` stops every process of it, removes what the node made on the host, and
// removes .cluster/.
import { existsSync } from 'node:fs';
import { ControlPlane, DEFAULT_CLUSTER_DIR, PROJECT_IMAGE } from './control-plane/control-plane.ts';
import { REAL_NODE, REAL_NODE_TAINT } from './control-plane/node.ts';

const command = process.argv[2];
const dir = process.env.STATIC_EXPORT_CLUSTER_DIR ?? DEFAULT_CLUSTER_DIR;

if (command === 'up') {
  if (existsSync(dir)) {
    console.error(`a control plane already runs in ${dir}; run npm run cluster:down first`);
    process.exit(1);
  }
  const started = Date.now();
  const cp = await ControlPlane.start(dir);
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  console.error(`control plane ready at ${cp.server} in ${seconds()}s`);
  if (process.argv.includes('--node')) {
    try {
      await cp.startNode();
      const tag = await cp.pushProjectImage();
      console.error(`the node pulls ${PROJECT_IMAGE}:${tag} (npm run image) from its registry`);
    } catch (e) {
      await cp.stop();
      throw e;
    }
    console.error(`real node ${REAL_NODE} Ready in ${seconds()}s (its pods tolerate ${REAL_NODE_TAINT.key})`);
  }
  console.log(cp.kubeconfig);
} else if (command === 'down') {
  if (!existsSync(dir)) {
    console.error(`no control plane in ${dir}`);
  } else {
    await ControlPlane.attach(dir).stop();
    console.error(`stopped the control plane in ${dir}`);
  }
} else {
  console.error('usage: node scripts/cluster.ts up [--node] | down');
  process.exit(2);
}
