// Real file:// bundles and a Syncer on the real fetch pipeline, for the sync tests (unit, and nginx in tools).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { inspectArchive } from '../../src/bundle/extract.ts';
import { DEFAULT_LIMITS } from '../../src/bundle/limits.ts';
import { fetchSite } from '../../src/cli/site-fetch.ts';
import type { PodCondition } from '../../src/sync/reporter.ts';
import type { WantedContent } from '../../src/sync/secret.ts';
import { VersionStore } from '../../src/sync/store.ts';
import { Syncer } from '../../src/sync/syncer.ts';
import { type TarEntrySpec, tarGz } from './tar-fixtures.ts';
import { tempDir } from './temp.ts';

const CTX = { stdout: process.stdout, stderr: process.stderr, env: {} };
const FLAGS = { ...DEFAULT_LIMITS, minPages: 1, retries: 0, timeout: 10_000 };

/** A bundle file whose pages say `label` (plus `extra` entries), and its content version. */
export async function bundle(label: string, pages = 2, extra: TarEntrySpec[] = []): Promise<WantedContent> {
  const entries: TarEntrySpec[] = [{ path: 'index.html', content: `<h1>${label}</h1>` }, ...extra];
  for (let i = 1; i < pages; i++) entries.push({ path: `page${i}.html`, content: `<p>${label} ${i}</p>` });
  const gz = tarGz(entries);
  const file = join(tempDir('bundle-'), `${label}.tar.gz`);
  writeFileSync(file, gz);
  const { version } = await inspectArchive(Readable.from(gz));
  return { version, source: { url: pathToFileURL(file).href } };
}

export function syncer(root: string, options: { keep?: number; minPages?: number } = {}) {
  const store = new VersionStore(root);
  const lines: string[] = [];
  const conditions: PodCondition[] = [];
  let downloads = 0;
  const s = new Syncer({
    store,
    keep: options.keep ?? 3,
    fetch: async (wanted, dest, signal) => {
      downloads++;
      await fetchSite(
        { source: wanted.source, dest, served: store.current, expectVersion: wanted.version, signal },
        { ...FLAGS, minPages: options.minPages ?? 1 },
        CTX,
      );
    },
    reporter: { report: async (c) => void conditions.push(c) },
    log: (line) => lines.push(line),
    retryBaseMs: 50,
  });
  return { store, syncer: s, lines, conditions, downloads: () => downloads };
}

export async function until(done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The served index page under `root`. */
export const served = (root: string): string => readFileSync(join(root, 'current', 'index.html'), 'utf8');
