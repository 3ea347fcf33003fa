// The served content on disk, as kubernetes/git-sync keeps it: one complete tree per content version
// under ROOT/versions/<version>, and ROOT/current, a symlink to versions/<version> that the web
// server's root points at (ROOT/previous points at the version served before it). A new version is fetched under ROOT/staging and renamed into versions/
// only when complete; the symlink is replaced by rename(2), so a request sees the old tree or the
// new one, never a partial or missing one.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, stat, symlink, utimes } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { BundleError } from '../bundle/errors.ts';
import { isContentVersion } from '../bundle/version.ts';

const VERSIONS = 'versions';
const STAGING = 'staging';
const CURRENT = 'current';
const PREVIOUS = 'previous';
const TEMP_LINK_PREFIX = '.current.tmp-';

export interface KeptVersion {
  version: string;
  /** When the version was last made the served one (its directory's mtime), ms since the epoch. */
  servedAt: number;
}

export class VersionStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** The symlink the web server's root points at. */
  get current(): string {
    return join(this.root, CURRENT);
  }

  versionDir(version: string): string {
    return join(this.root, VERSIONS, checked(version));
  }

  /** Where a version is fetched before it is complete; removed by `prepare` after a crash. */
  stagingDir(version: string): string {
    return join(this.root, STAGING, checked(version));
  }

  /**
   * Makes the layout and removes what a killed process left half done: staging trees and temporary
   * symlinks. `current` and the complete versions stay, so a restart keeps serving.
   */
  async prepare(): Promise<void> {
    const current = await lstat(this.current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (current && !current.isSymbolicLink()) {
      throw new BundleError(
        'DestinationNotOurs',
        `${this.current} exists and is not the symlink static-export sync keeps there: choose a new or empty --root`,
      );
    }
    await rm(join(this.root, STAGING), { recursive: true, force: true });
    await mkdir(join(this.root, VERSIONS), { recursive: true });
    await mkdir(join(this.root, STAGING), { recursive: true });
    for (const name of await readdir(this.root)) {
      if (name.startsWith(TEMP_LINK_PREFIX)) await rm(join(this.root, name), { force: true });
    }
  }

  /** The version `current` points at, or undefined when nothing is served yet. */
  async served(): Promise<string | undefined> {
    try {
      const target = await readlink(this.current);
      const version = basename(target);
      return isContentVersion(version) ? version : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** The complete versions on disk, most recently served first. */
  async kept(): Promise<KeptVersion[]> {
    const names = (await readdir(join(this.root, VERSIONS))).filter(isContentVersion);
    const kept = await Promise.all(
      names.map(async (version) => ({ version, servedAt: (await stat(this.versionDir(version))).mtimeMs })),
    );
    return kept.sort((a, b) => b.servedAt - a.servedAt);
  }

  /** Moves a complete staged tree into versions/ (a rename within one file system: all or nothing). */
  async install(version: string): Promise<void> {
    await rename(this.stagingDir(version), this.versionDir(version));
  }

  /** The symlink to the version served before `current`'s (a web server's fallback for its pages' assets). */
  get previous(): string {
    return join(this.root, PREVIOUS);
  }

  /**
   * Points `current` at a kept version atomically, and `previous` at the one it replaced: a page
   * read just before the swap may ask for assets only its version has (hashed names), which a web
   * server finds in `current` or `previous` at every moment of the swap.
   */
  async swap(version: string): Promise<void> {
    const dir = this.versionDir(version);
    if (!(await lstat(dir)).isDirectory()) throw new Error(`${dir} is not a directory`);
    // The version's mtime records when it was last served: the newest N are the ones kept.
    const now = new Date();
    await utimes(dir, now, now);
    const before = await this.served();
    // `previous` first: were `current` swapped first, a page of `before` read from this pod a moment
    // earlier would find its assets neither in the new tree nor in a `previous` not yet linked.
    if (before !== undefined && before !== version) await this.link(before, this.previous);
    await this.link(version, this.current);
  }

  /** A new symlink to versions/<version> renamed over `path`: readers see the old link or the new one. */
  private async link(version: string, path: string): Promise<void> {
    const temp = join(this.root, `${TEMP_LINK_PREFIX}${randomBytes(4).toString('hex')}`);
    // Relative, so the tree can be mounted elsewhere (another container, another path) and still resolve.
    await symlink(join(VERSIONS, version), temp);
    try {
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async remove(version: string): Promise<void> {
    await rm(this.versionDir(version), { recursive: true, force: true });
  }
}

/** A version names a directory: only content versions (sha256-<hex>) can, never a path. */
function checked(version: string): string {
  if (!isContentVersion(version)) throw new Error(`"${version.slice(0, 80)}" is not a content version`);
  return version;
}
