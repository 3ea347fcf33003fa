// The published package: `npm pack` builds dist/ (prepack), and the tarball installs into an empty
// project with its runtime dependencies only (no dev tools, no repository scripts) and runs, as
// `static-export` and as the kubectl plugin `kubectl static-export`.
// Slow for a unit test (a full tsc build and an npm install, about a minute), but it is the only
// check that what users install works. Offline: dependencies come from npm's cache, at the
// versions of this repository's lock (the consumer gets the lock's production entries).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { KUBECTL } from '../../support/cluster/kube.ts';
import { siteEntries, tarGz } from '../../support/fixtures/tar-fixtures.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../../..');
// Node 24 and npm of the project first, as for npm scripts.
const env = { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` };

let work: string;
afterAll(() => rm(work, { recursive: true, force: true }));

interface Lock {
  packages: Record<string, { dev?: boolean; dependencies?: Record<string, string> }>;
}

it('packs, installs into an empty project and runs --version and fetch', { timeout: 300_000 }, async () => {
  work = await mkdtemp(join(tmpdir(), 'package-test-'));
  await run('npm', ['pack', '--pack-destination', work], { cwd: ROOT, env });
  const [tarball] = (await readdir(work)).filter((f) => f.endsWith('.tgz'));
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
  };
  const listing = (await run('tar', ['-tzf', join(work, tarball as string)])).stdout.split('\n');
  expect(listing).toContain('package/dist/cli/main.js');
  expect(listing).toContain('package/crds/staticexportreleases.staticexport.dev.yaml');
  expect(listing.filter((f) => /^package\/(src|test|scripts)\//.test(f))).toEqual([]);

  const consumer = join(work, 'consumer');
  await mkdir(consumer);
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  const packages: Lock['packages'] = { '': { dependencies: pkg.dependencies } };
  for (const [path, entry] of Object.entries(lock.packages)) if (path && !entry.dev) packages[path] = entry;
  await writeFile(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies: pkg.dependencies }),
  );
  await writeFile(
    join(consumer, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }),
  );
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, tarball as string)], {
    cwd: consumer,
    env,
  });
  const installed = await readdir(join(consumer, 'node_modules'));
  for (const devTool of ['typescript', 'vitest', '@biomejs', 'node'])
    expect(installed).not.toContain(devTool);

  const bin = join(consumer, 'node_modules/.bin/static-export');
  expect((await run(bin, ['--version'], { env })).stdout.trim()).toBe(pkg.version);
  // The kubectl plugin: the real kubectl runs `kubectl-static_export` from the PATH for `kubectl static-export`.
  const pluginEnv = { ...env, PATH: `${join(consumer, 'node_modules/.bin')}:${env.PATH}` };
  expect((await run(KUBECTL, ['static-export', '--version'], { env: pluginEnv })).stdout.trim()).toBe(
    pkg.version,
  );

  const archive = join(work, 'bundle.tar.gz');
  await writeFile(archive, tarGz(siteEntries()));
  const fetched = await run(
    bin,
    ['fetch', '--url', pathToFileURL(archive).href, '--dest', join(work, 'site'), '--json'],
    { env },
  );
  expect(JSON.parse(fetched.stdout)).toMatchObject({ event: 'fetched', files: 3 });
  expect(await readFile(join(work, 'site/guides/start.html'), 'utf8')).toBe('<h1>Start</h1>');
});
