// Each chart's README lists every value with its default, and only values the schema knows.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, OPERATOR_CHART_DIR, SIMULATOR_CHART_DIR } from '../../support/tools/chart.ts';

interface SchemaNode {
  $ref?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  definitions?: Record<string, SchemaNode>;
}

async function load(chart: string) {
  const schema = JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8')) as SchemaNode;
  const values = parse(await readFile(join(chart, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const readme = await readFile(join(chart, 'README.md'), 'utf8');
  return { schema, values, readme };
}

/**
 * values.yaml's leaves with their defaults: objects the schema closes (additionalProperties false)
 * are walked into, anything else (maps, lists, resources) is one value. Fails on a key the schema
 * does not know.
 */
function leaves(schema: SchemaNode): (values: Record<string, unknown>) => Map<string, string> {
  const resolve = (n: SchemaNode | undefined) =>
    n?.$ref ? schema.definitions?.[n.$ref.replace('#/definitions/', '')] : n;
  const walk = (
    node: SchemaNode,
    values: Record<string, unknown>,
    prefix: string,
    out: Map<string, string>,
  ) => {
    for (const [key, value] of Object.entries(values)) {
      const path = `${prefix}${key}`;
      const child = resolve(node.properties?.[key]);
      if (!child) throw new Error(`values.yaml has ${path}, the schema does not`);
      // global stays open (a parent chart shares it), yet the keys it defines are this chart's values.
      if (
        (child.additionalProperties === false || path === 'global') &&
        value &&
        typeof value === 'object' &&
        !Array.isArray(value)
      ) {
        walk(child, value as Record<string, unknown>, `${path}.`, out);
      } else {
        out.set(path, JSON.stringify(value));
      }
    }
    // Every key of a closed object has a default, so it is documented too.
    const missing = Object.keys(node.properties ?? {}).filter((k) => !(k in values));
    if (missing.length) throw new Error(`values.yaml lacks ${missing.map((k) => prefix + k).join(', ')}`);
    return out;
  };
  return (values) => walk(schema, values, '', new Map());
}

describe.each([CHART_DIR, OPERATOR_CHART_DIR, SIMULATOR_CHART_DIR])('chart README of %s', (chart) => {
  it('documents every value of values.yaml with its default, and nothing else', async () => {
    const { schema, values, readme } = await load(chart);
    const expected = leaves(schema)(values);
    const documented = new Map(
      [...readme.matchAll(/^\| `([^`]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected));
  });
});
