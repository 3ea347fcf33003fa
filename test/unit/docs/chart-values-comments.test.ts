// The charts' values.yaml comments against their templates: a comment that opens with a flag
// (`# --link-ttl: …`, `# --log-level of …`) says the chart passes that flag, so some template must pass it; one that
// names an environment variable (`env STATIC_EXPORT_LOG_LEVEL`) says the chart sets it.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

const CHARTS = readdirSync(join(REPO, 'charts'));

/** What the comments of a values.yaml say the chart does that its templates do not. */
function unbacked(values: string, templates: string): string[] {
  const comments = values.split('\n').filter((l) => /^\s*#/.test(l));
  const flags = [...new Set(comments.flatMap((l) => /^\s*# (--[a-z][a-z-]*)(?![\w-])/.exec(l)?.[1] ?? []))];
  const envs = comments.flatMap((l) => [...l.matchAll(/\benv ([A-Z][A-Z0-9_]+)/g)].map((m) => m[1] ?? ''));
  return [
    ...flags
      .filter((f) => !new RegExp(`^\\s*- ${f}(?:=|\\s*$)`, 'm').test(templates))
      .map((f) => `flag ${f}`),
    ...envs.filter((e) => !new RegExp(`^\\s*- name: ${e}\\s*$`, 'm').test(templates)).map((e) => `env ${e}`),
  ];
}

describe("charts' values.yaml comments", () => {
  it.each(CHARTS)('%s: each flag and variable a comment names is set by a template', (chart) => {
    const templates = repoFiles(new RegExp(`^charts/${chart}/templates/.*\\.(yaml|tpl)$`))
      .map(readRepoFile)
      .join('\n');
    expect(unbacked(readRepoFile(`charts/${chart}/values.yaml`), templates)).toEqual([]);
  });

  it('reports a flag the templates do not pass and a variable they do not set', () => {
    const templates =
      'args:\n  - --link-ttl={{ .Values.linkTtl }}\nenv:\n  - name: STATIC_EXPORT_LOG_LEVEL\n';
    expect(unbacked('# --link-ttl: lifetime\n# env STATIC_EXPORT_LOG_LEVEL: level', templates)).toEqual([]);
    expect(
      unbacked('# --log-level of the simulator: …\n# --log-level: …\n# env OTHER_VAR', templates),
    ).toEqual(['flag --log-level', 'env OTHER_VAR']);
  });
});
