// What each path of `npm run demo` runs besides Node and the Go-built control plane, checked before
// the first build: a missing tool found after a 10-minute build (nginx on the path without a real
// node; buildah, busybox and skopeo for the image the real node pulls) wasted it.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NGINX } from './site-local.ts';

export interface DemoTool {
  /** A command looked up on the PATH, or an absolute path. */
  command: string;
  /** The Debian package that installs it. */
  debian: string;
}

/** Both paths: the control plane's certificates. */
const ALWAYS: DemoTool[] = [{ command: 'openssl', debian: 'openssl' }];
/** The real node: the project's image built with buildah on a busybox base, pushed with skopeo. */
const ON_NODE: DemoTool[] = [
  { command: 'buildah', debian: 'buildah' },
  { command: 'busybox', debian: 'busybox-static' },
  { command: 'skopeo', debian: 'skopeo' },
];
/** Without a real node the site's pod runs here: nginx serves it with the chart's config. */
const LOCAL: DemoTool[] = [{ command: NGINX, debian: 'nginx' }];

export function demoTools(onNode: boolean): DemoTool[] {
  return [...ALWAYS, ...(onNode ? ON_NODE : LOCAL)];
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `command` runs: an absolute path as it is, a name from `path` (PATH's form). */
export function installed(command: string, path: string): boolean {
  if (command.startsWith('/')) return executable(command);
  return path.split(delimiter).some((dir) => dir !== '' && executable(join(dir, command)));
}

/** The message for the tools of a path that are missing, or undefined when all are there. */
export function missingTools(onNode: boolean, path: string): string | undefined {
  const missing = demoTools(onNode).filter((t) => !installed(t.command, path));
  if (missing.length === 0) return undefined;
  const where = onNode ? 'with a real node' : 'without a real node (the site runs on this machine)';
  return (
    `the demo ${where} needs ${missing.map((t) => t.command).join(', ')}, not installed ` +
    `(Debian: apt-get install ${missing.map((t) => t.debian).join(' ')})`
  );
}
