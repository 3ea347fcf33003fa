// `npm run cluster:up` starts the local control plane in .cluster/ and prints its KUBECONFIG path;
// `npm run cluster:down` stops every process of it and removes .cluster/.
import { existsSync } from 'node:fs';
import { ControlPlane, DEFAULT_CLUSTER_DIR } from './control-plane/control-plane.ts';

const command = process.argv[2];
const dir = process.env.STATIC_EXPORT_CLUSTER_DIR ?? DEFAULT_CLUSTER_DIR;

if (command === 'up') {
  if (existsSync(dir)) {
    console.error(`a control plane already runs in ${dir}; run npm run cluster:down first`);
    process.exit(1);
  }
  const started = Date.now();
  const cp = await ControlPlane.start(dir);
  console.error(`control plane ready at ${cp.server} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  console.log(cp.kubeconfig);
} else if (command === 'down') {
  if (!existsSync(dir)) {
    console.error(`no control plane in ${dir}`);
  } else {
    await ControlPlane.attach(dir).stop();
    console.error(`stopped the control plane in ${dir}`);
  }
} else {
  console.error('usage: node scripts/cluster.ts up|down');
  process.exit(2);
}
