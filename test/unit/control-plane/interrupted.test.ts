// A control plane an interrupted run left (a reboot or a kill during `npm run cluster:up` or after
// it): `cluster:down` says what it found and removes it, `cluster:up` cleans it up and starts anew,
// and neither signals a process that merely reuses a recorded pid. Fake cluster dirs in a temp dir
// stand in for .cluster/ (STATIC_EXPORT_CLUSTER_DIR); no control plane is started.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectClusterDir, tearDown } from '../../../scripts/control-plane/cluster-dir.ts';
import { runProcess } from '../../../scripts/run-process.ts';
import { tempDir } from '../../support/temp.ts';

const clusterScript = join(import.meta.dirname, '../../../scripts/cluster.ts');

/** `npm run cluster:<command>` on `dir`, with the environment given. */
const cluster = (command: 'up' | 'down', dir: string, env: NodeJS.ProcessEnv = process.env) =>
  runProcess(process.execPath, [clusterScript, command], {
    env: { ...env, STATIC_EXPORT_CLUSTER_DIR: dir },
  });

/**
 * An environment where `cluster:up` finds ps but not bash: a start fails at its first step, building
 * the binaries, so no control plane can start here, and what the cleanup did is left to see.
 */
function cannotStart(): NodeJS.ProcessEnv {
  const bin = tempDir('path-');
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (existsSync(join(dir, 'ps')) && !existsSync(join(bin, 'ps')))
      symlinkSync(join(dir, 'ps'), join(bin, 'ps'));
  return { ...process.env, PATH: bin };
}

/** A cluster dir as a start interrupted before its first component leaves it: logs/ only. */
function onlyLogs(): string {
  const dir = join(tempDir('cluster-'), '.cluster');
  mkdirSync(join(dir, 'logs'), { recursive: true });
  writeFileSync(join(dir, 'logs', 'etcd.log'), '');
  return dir;
}

/** Records `pids` in the dir's state.json (with the fields a started control plane saves). */
function writeState(dir: string, pids: Record<string, number>): void {
  const state = { binDir: '/nonexistent', ports: { etcd: 1, etcdPeer: 2, apiserver: 3 }, pids };
  writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
}

function withState(pids: Record<string, number>): string {
  const dir = onlyLogs();
  writeState(dir, pids);
  return dir;
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

/** A process in its own group (as components run) with `args` on its command line. */
function program(...args: string[]): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', '--', ...args], {
    detached: true,
    stdio: 'ignore',
  });
  started.push(child);
  return child.pid ?? 0;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A pid no process has: one that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid ?? 0;
}

describe('npm run cluster:down after an interrupted run', () => {
  it('with logs/ alone, exits 0 saying the start was interrupted, and removes the dir', async () => {
    const dir = onlyLogs();
    const r = await cluster('down', dir);
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(
      `the control plane in ${dir} was not running (its start stopped before it wrote state.json; it holds only logs); removed what it left`,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it('with a state.json naming a dead pid, exits 0 and removes the dir', async () => {
    const dir = withState({ etcd: await deadPid() });
    const r = await cluster('down', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('was not running (none of the processes its state.json names runs it)');
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves alone a process that reuses a recorded pid (its own group, as after a reboot)', async () => {
    const other = program('unrelated');
    const dir = withState({ etcd: other, 'kube-apiserver': other });
    const r = await cluster('down', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('was not running');
    expect(alive(other)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it('with no cluster dir at all, exits 0 saying there is nothing to stop', async () => {
    const dir = join(tempDir('cluster-'), '.cluster');
    const r = await cluster('down', dir);
    expect(r).toMatchObject({ code: 0, stderr: `no control plane in ${dir}: nothing to stop\n` });
  });

  it('still stops a recorded component that runs', async () => {
    const dir = onlyLogs();
    const etcd = program(`--data-dir=${dir}/etcd-data`);
    writeState(dir, { etcd });
    expect(await inspectClusterDir(dir)).toEqual({ kind: 'running', what: [`etcd (pid ${etcd})`] });
    const r = await cluster('down', dir);
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(`stopped the control plane in ${dir}`);
    expect(alive(etcd)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('npm run cluster:up after an interrupted run', () => {
  it('cleans up logs/ alone and starts anew', async () => {
    const dir = onlyLogs();
    writeFileSync(join(dir, 'logs', 'etcd.log'), 'from the interrupted run');
    const r = await cluster('up', dir, cannotStart());
    expect(r.stderr).toContain(
      `cleaning up the control plane an interrupted run left in ${dir} (its start stopped before it wrote state.json; it holds only logs)`,
    );
    expect(r.stderr).toContain('cluster:up: spawn bash ENOENT');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(1);
    // The fresh start's logs/ is empty: the interrupted run's went with its directory.
    expect(readdirSync(join(dir, 'logs'))).toEqual([]);
  });

  it('judges a state.json whose pids are gone or reused as gone, and tearDown removes it', async () => {
    const dir = withState({ etcd: await deadPid(), kubelet: program('unrelated') });
    expect(await inspectClusterDir(dir)).toEqual({
      kind: 'gone',
      why: 'none of the processes its state.json names runs it',
    });
    await tearDown(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('judges an unreadable state.json as gone', async () => {
    const dir = onlyLogs();
    writeFileSync(join(dir, 'state.json'), '{"binDir": "/nonex');
    expect(await inspectClusterDir(dir)).toEqual({
      kind: 'gone',
      why: 'its state.json is unreadable; it holds only logs, state.json',
    });
  });

  it('refuses a dir another cluster:up is still starting', async () => {
    const dir = onlyLogs();
    const starter = program('scripts/cluster.ts', 'up');
    writeFileSync(join(dir, 'cluster-up.pid'), String(starter));
    expect(await inspectClusterDir(dir)).toEqual({
      kind: 'running',
      what: [`npm run cluster:up (pid ${starter}) is still starting it`],
    });
    const r = await cluster('up', dir, cannotStart());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`a control plane already runs in ${dir}: npm run cluster:up (pid ${starter})`);
    expect(existsSync(join(dir, 'logs', 'etcd.log'))).toBe(true);
  });
});
