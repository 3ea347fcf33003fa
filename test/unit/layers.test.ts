// The rooms of src/ in layers: a file imports from its own layer or below, never above, so the
// machinery does not depend on the policy built on it. A new upward import fails here (and Biome's
// noImportCycles catches cycles within a layer), as does a release rule or fold that reaches for a
// source's effects (sources/ is the reconciler's and its action table's, as targets/ is).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

/** Bottom first. A room is a folder of src/, or a file at its top. */
const LAYERS: readonly (readonly string[])[] = [
  [
    'log.ts',
    'redact.ts',
    'terminal-text.ts',
    'timers.ts',
    'http.ts',
    'domain.ts',
    'project.ts',
    'api-base-url.ts',
    'url-allow-list.ts',
    'failure.ts',
    'gc.ts',
    'tar',
  ],
  ['runtime'],
  ['crd', 'secrets'],
  ['api', 'bundle', 'simulator'],
  ['oci'],
  ['targets', 'trigger'],
  ['git'],
  ['controllers'],
  ['sync'],
  ['cli'],
];

const layerOf = (room: string) => LAYERS.findIndex((rooms) => rooms.includes(room));
const roomOf = (file: string) => relative(SRC, file).split('/')[0] ?? '';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Relative imports, static and dynamic, resolved to files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map((m) =>
    resolve(dirname(file), m[1] ?? ''),
  );
}

describe('layers', () => {
  const files = filesUnder(SRC);

  it('place every room of src/', () => {
    const rooms = [...new Set(files.map(roomOf))];
    expect(rooms.filter((r) => layerOf(r) < 0)).toEqual([]);
  });

  it('hold: nothing in src/ imports from a layer above its own', () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(SRC) && layerOf(roomOf(target)) > layerOf(roomOf(file)))
        .map((target) => `${relative(ROOT, file)} imports ${relative(ROOT, target)}`),
    );
    expect(upward).toEqual([]);
  });

  it('hold inside the release controller: only the reconciler and its actions (the table and each feature effect) talk to its sources, which never import them', () => {
    const release = join(SRC, 'controllers/static-export-release');
    // The observing half of each source: sources/ and each feature's observer.
    const observers = [
      'sources/',
      'export/platform-export.ts',
      'registry/oci-registry.ts',
      'registry/registry-client.ts',
    ];
    const isSource = (file: string) => observers.some((o) => file.startsWith(join(release, o)));
    // The acting half: the table and each feature's effect.
    const actors = [
      'release-actions.ts',
      'export/start-export.ts',
      'export/publish-content.ts',
      'link/job-link.ts',
      'link/fresh-link.ts',
      'rollout/roll-workloads.ts',
      'registry/pull-image.ts',
      'write-back/push-version.ts',
    ];
    const talkers = [join(release, 'release-reconciler.ts'), ...actors.map((a) => join(release, a))];
    const above = [...talkers, join(release, 'release-setup.ts')];
    const crossing = files
      .filter((file) => file.startsWith(release))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) =>
            isSource(file) ? above.includes(target) : isSource(target) && !talkers.includes(file),
          )
          .map((target) => `${relative(ROOT, file)} imports ${relative(ROOT, target)}`),
      );
    expect(crossing).toEqual([]);
  });

  it('keep the test tiers apart: nothing outside test/unit imports from it', () => {
    const outside = ['test/tools', 'test/integration', 'test/support', 'bench', 'scripts'].flatMap((d) =>
      filesUnder(join(ROOT, d)),
    );
    const intoUnit = outside.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(join(ROOT, 'test/unit')))
        .map((target) => `${relative(ROOT, file)} imports ${relative(ROOT, target)}`),
    );
    expect(intoUnit).toEqual([]);
  });
});
