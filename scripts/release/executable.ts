// The CLI as one file that runs without Node installed: Node's single executable applications.
// Node 24 runs only a CommonJS script from the injected blob, so esbuild bundles the CLI and its
// dependencies into one; the blob goes into a copy of the Node binary that made it (postject).
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { inject } from 'postject';
import { ReleaseError } from './errors.ts';
import { runTool } from './tools.ts';

/** The fuse Node's binary carries; postject flips it so the binary runs the blob. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export const executableName = (version: string): string =>
  `static-export-${version}-${process.platform}-${process.arch}`;

/** Builds the single executable for this platform into `outDir`; returns its path. */
export async function buildExecutable(root: string, version: string, outDir: string): Promise<string> {
  if (!process.versions.node.startsWith('24.'))
    throw new ReleaseError(
      `the single executable is built from the Node running the release, ${process.version}; run it with Node 24 (npm run release does)`,
    );
  const work = mkdtempSync(join(tmpdir(), 'static-export-sea-'));
  try {
    const script = join(work, 'static-export.cjs');
    await build({
      entryPoints: [join(root, 'scripts/release/executable-entry.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node24',
      outfile: script,
      logLevel: 'error',
      legalComments: 'none',
      // A fifth of the size, and with V8's code cache in the blob, `--version` starts in about a third
      // of the time and memory (measured on this machine: 0.35 s and 93 MB against 1.2 s and 141 MB).
      // keepNames: error classes keep their names in messages.
      minify: true,
      keepNames: true,
      // ssh2 loads cpu-features in a try (only to order its ciphers) and runs without it; the package
      // is a native addon whose build allowScripts denies, so it has nothing to bundle.
      external: ['cpu-features'],
      // No package.json travels with the binary; import.meta does not exist in CommonJS (the
      // simulator's default docs directory is resolved from it: beside the binary, so pass --docs).
      define: {
        STATIC_EXPORT_VERSION: JSON.stringify(version),
        'import.meta.url': '__static_export_url',
        'import.meta.main': 'false',
      },
      banner: { js: 'const __static_export_url = require("node:url").pathToFileURL(__filename).href;' },
    });
    const blob = join(work, 'sea.blob');
    const config = join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true }),
    );
    await runTool('node --experimental-sea-config', process.execPath, ['--experimental-sea-config', config]);
    const binary = join(outDir, executableName(version));
    copyFileSync(process.execPath, binary);
    chmodSync(binary, 0o755);
    // LIEF (inside postject) warns about every unnamed ELF note section of the Node binary: harmless.
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!/Can't find string offset for section name/.test(String(args[0]))) warn(...args);
    };
    try {
      await inject(binary, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
    } finally {
      console.warn = warn;
    }
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
