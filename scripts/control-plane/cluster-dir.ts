// What `npm run cluster:up` finds in its directory before starting: nothing, a control plane that
// runs, or one whose processes are gone (a reboot or a kill during or after its start: logs/ alone,
// or a state.json naming pids that no longer run it); and taking down any of them.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from '../run-process.ts';
import { ControlPlane } from './control-plane.ts';
import { cleanNode, killShims, nodePaths } from './node.ts';

export type Found = { kind: 'none' } | { kind: 'running'; what: string[] } | { kind: 'gone'; why: string };

/** `npm run cluster:up` notes its pid here, so another one does not take a start still building for a dead one. */
const STARTER = 'cluster-up.pid';

export function markStarting(dir: string): void {
  writeFileSync(join(dir, STARTER), String(process.pid));
}

/** The control plane `dir` holds, judged by which of its processes still run. */
export async function inspectClusterDir(dir: string): Promise<Found> {
  if (!existsSync(dir)) return { kind: 'none' };
  const saved = savedControlPlane(dir);
  const running =
    typeof saved === 'string' ? [] : (await saved.running()).map((r) => `${r.component} (pid ${r.pid})`);
  const starter = await liveStarter(dir);
  if (starter) running.push(`npm run cluster:up (pid ${starter}) is still starting it`);
  if (running.length > 0) return { kind: 'running', what: running };
  if (typeof saved !== 'string')
    return { kind: 'gone', why: 'none of the processes its state.json names runs it' };
  const entries = readdirSync(dir).filter((e) => e !== STARTER);
  return { kind: 'gone', why: `${saved}; it holds only ${entries.join(', ') || 'nothing'}` };
}

/**
 * Stops what still runs of the control plane in `dir` and removes what it left: its directory and,
 * when it had the real node, the node's mounts, links, rules and host files (cleanNode; root).
 */
export async function tearDown(dir: string): Promise<void> {
  const saved = savedControlPlane(dir);
  if (typeof saved !== 'string') return saved.stop();
  // Without a readable state.json no pid is known: only what names the node's directory.
  if (existsSync(nodePaths(dir).root)) {
    await killShims(dir);
    await cleanNode(dir);
  }
  rmSync(dir, { recursive: true, force: true });
}

/** The control plane state.json describes, or why there is none to read. */
function savedControlPlane(dir: string): ControlPlane | string {
  if (!existsSync(join(dir, 'state.json'))) return 'its start stopped before it wrote state.json';
  try {
    return ControlPlane.attach(dir);
  } catch {
    return 'its state.json is unreadable';
  }
}

/** The pid of a `npm run cluster:up` still starting the control plane in `dir`, if one is. */
async function liveStarter(dir: string): Promise<number | undefined> {
  const file = join(dir, STARTER);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8'));
  const r = await runProcess('ps', ['-ww', '-o', 'args=', '-p', String(pid)]);
  return r.code === 0 && r.stdout.includes('cluster.ts up') ? pid : undefined;
}
