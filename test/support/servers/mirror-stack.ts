// What the `mirror` CLI tests run against: a scratch directory, the simulator with instant exports,
// a real Distribution registry (built on first use, hence GO_TOOL_BUILD_TIMEOUT_MS for the hook
// that starts it) and a registry client to read results back.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { startRegistry, type TestRegistry } from './registry.ts';

export interface MirrorStack {
  work: string;
  sim: Simulator;
  registry: TestRegistry;
  client: RegistryClient;
  /** Closes all of it and removes the scratch directory. */
  close: () => Promise<void>;
}

/** `prefix` names the scratch directory under the system temp directory. */
export async function startMirrorStack(prefix: string): Promise<MirrorStack> {
  const work = await mkdtemp(join(tmpdir(), prefix));
  let sim: Simulator | undefined;
  let registry: TestRegistry | undefined;
  let client: RegistryClient | undefined;
  const close = async () => {
    await client?.close();
    await registry?.close();
    await sim?.close();
    await rm(work, { recursive: true, force: true });
  };
  try {
    sim = await startSimulator({ exportDurationMs: 0 });
    registry = await startRegistry();
    client = new RegistryClient({ registry: registry.host });
    return { work, sim, registry, client, close };
  } catch (err) {
    await close();
    throw err;
  }
}
