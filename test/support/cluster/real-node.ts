// The real node (scripts/control-plane/node.ts) for tests whose pods must really run: started on the
// suite's control plane by the first test file that needs it and shared by the next ones; the global
// teardown stops it with the control plane.
import { createHash } from 'node:crypto';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { inject } from 'vitest';
import { ControlPlane } from '../../../scripts/control-plane/control-plane.ts';
import { nodeUnavailable } from '../../../scripts/control-plane/node.ts';

/** The first start on a fresh machine builds the kubelet (about 5 minutes on two cores). */
export const REAL_NODE_START_TIMEOUT_MS = 20 * 60_000;

export async function realNode(): Promise<ControlPlane> {
  const dir = inject('controlPlaneDir');
  if (!dir)
    throw new Error(
      'the real node joins the suite’s own control plane (unset STATIC_EXPORT_TEST_KUBECONFIG)',
    );
  const cp = ControlPlane.attach(dir);
  if (!cp.hasNode) await cp.startNode();
  return cp;
}

/**
 * Why the real node cannot run for this suite (a reason for `skip`), or undefined when it runs
 * already or can be started.
 */
export async function realNodeUnavailable(): Promise<string | undefined> {
  const dir = inject('controlPlaneDir');
  if (!dir) return 'the real node joins the suite’s own control plane (unset STATIC_EXPORT_TEST_KUBECONFIG)';
  // Once the suite's node runs, nodeUnavailable() sees its bridge as another node's.
  if (ControlPlane.attach(dir).hasNode) return undefined;
  return nodeUnavailable();
}

/** The status of a GET on a connection of its own, or why there was none. */
export function statusOf(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', (e) => resolve(e.message));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve(e.message));
  });
}

/** Calls `read` one call after another, 20 ms apart, until stopped; then what it gathered. */
function readUntilStopped<T>(gathered: T, read: (into: T) => Promise<void>): { stop: () => Promise<T> } {
  let reading = true;
  const client = (async () => {
    while (reading) {
      await read(gathered);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      reading = false;
      await client;
      return gathered;
    },
  };
}

/** A GET on a connection of its own: its status and body. */
function getText(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/** Reads the site continuously, one request at a time, until stopped; each on a connection of its own. */
export function readContinuously(url: string): { stop: () => Promise<{ ok: number; failed: string[] }> } {
  return readUntilStopped({ ok: 0, failed: [] as string[] }, async (answers) => {
    const why = await statusOf(url);
    if (why === 200) answers.ok++;
    else answers.failed.push(String(why));
  });
}

/** What a reader of a page and its asset saw: answers, failures, and pages whose asset was of another version. */
export interface VersionedReads {
  ok: number;
  failed: string[];
  mixed: string[];
  versions: string[];
}

/**
 * Reads `pageUrl` and then the asset it links continuously until stopped, as a browser loads a
 * page, each request on a connection of its own (see readContinuously): the page says `marker <version>` and links `marker.<8 hex>.js`, whose text is the version.
 * A page whose asset is missing or of another version is mixed.
 */
export function readPageAndAsset(pageUrl: string): { stop: () => Promise<VersionedReads> } {
  const reads: VersionedReads = { ok: 0, failed: [], mixed: [], versions: [] };
  return readUntilStopped(reads, async () => {
    try {
      const page = await getText(pageUrl);
      const version = page.text.match(/marker (v\d+)/)?.[1];
      const asset = page.text.match(/marker\.[0-9a-f]{8}\.js/)?.[0];
      if (page.status !== 200 || !version || !asset) {
        reads.failed.push(`page ${page.status}`);
        return;
      }
      const res = await getText(new URL(asset, pageUrl).href);
      const text = res.text.trim();
      if (res.status !== 200 || text !== version)
        reads.mixed.push(`${version} page, ${asset} ${res.status === 200 ? `of ${text}` : res.status}`);
      else reads.ok++;
      if (!reads.versions.includes(version)) reads.versions.push(version);
    } catch (e) {
      reads.failed.push((e as Error).message);
    }
  });
}

/**
 * Makes the docs version `n` recognisable: page `marker` says `marker v<n>` and links a script named
 * with a content hash, as static site generators name theirs (the previous one is removed). A script:
 * the site's nginx falls back to the previous version for scripts, styles, fonts and images only.
 */
export function writeMarker(docsDir: string, n: number): string {
  const version = `v${n}`;
  for (const f of readdirSync(docsDir)) if (/^marker\.[0-9a-f]{8}\.js$/.test(f)) rmSync(join(docsDir, f));
  const asset = `marker.${createHash('sha256').update(version).digest('hex').slice(0, 8)}.js`;
  writeFileSync(join(docsDir, asset), `${version}\n`);
  writeFileSync(join(docsDir, 'marker.md'), `# Marker\n\nmarker ${version} [its asset](${asset})\n`);
  return version;
}
