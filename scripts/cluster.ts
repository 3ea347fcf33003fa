// `npm run cluster:up` starts the local control plane in .cluster/ and prints its KUBECONFIG path
// (`-- --node` adds the real node, where pods run, with the project's image pullable there);
// `npm run cluster:down` stops every process of it, removes what the node made on the host, and
// removes .cluster/. Either first cleans up a control plane an interrupted run left (cluster-dir.ts).
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { inspectClusterDir, markStarting, tearDown } from './control-plane/cluster-dir.ts';
import { ControlPlane, DEFAULT_CLUSTER_DIR, PROJECT_IMAGE } from './control-plane/control-plane.ts';
import { REAL_NODE, REAL_NODE_TAINT } from './control-plane/node.ts';

const command = process.argv[2];
// Absolute, as the components' command lines name it: that is how their processes are recognised.
const dir = resolve(process.env.STATIC_EXPORT_CLUSTER_DIR ?? DEFAULT_CLUSTER_DIR);

/** Failures are told in one line (what to do included), without a stack trace. */
process.on('uncaughtException', (e) => {
  console.error(`cluster:${command}: ${e.message}`);
  process.exit(1);
});

if (command === 'up') {
  const found = await inspectClusterDir(dir);
  if (found.kind === 'running') {
    console.error(
      `a control plane already runs in ${dir}: ${found.what.join(', ')}; run npm run cluster:down first`,
    );
    process.exit(1);
  }
  if (found.kind === 'gone') {
    console.error(`cleaning up the control plane an interrupted run left in ${dir} (${found.why})`);
    await tearDown(dir);
  }
  mkdirSync(dir, { recursive: true });
  markStarting(dir);
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
  const found = await inspectClusterDir(dir);
  if (found.kind === 'none') {
    console.error(`no control plane in ${dir}: nothing to stop`);
  } else {
    await tearDown(dir);
    console.error(
      found.kind === 'running'
        ? `stopped the control plane in ${dir}`
        : `the control plane in ${dir} was not running (${found.why}); removed what it left`,
    );
  }
} else {
  console.error('usage: node scripts/cluster.ts up [--node] | down');
  process.exit(2);
}
