import { z } from 'zod';

type JsonSchema = { [key: string]: unknown };

/**
 * Turns a zod schema into a structural OpenAPI v3 schema as CRDs require: no $ref, no
 * additionalProperties beside properties, free-form objects marked preserve-unknown-fields.
 * Anything it cannot express is an error here, at generation time, not at `kubectl apply`.
 */
export function toStructuralSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    reused: 'inline',
    cycles: 'throw',
  });
  return normalize(json as JsonSchema, '');
}

function normalize(node: JsonSchema, path: string): JsonSchema {
  // An int-or-string field: the API server knows its two types from the flag alone.
  if (node['x-kubernetes-int-or-string'] === true && Array.isArray(node.anyOf)) {
    const { anyOf: _types, ...rest } = node;
    node = rest;
  }
  for (const forbidden of ['$ref', 'anyOf', 'oneOf', 'allOf', 'not']) {
    if (forbidden in node)
      throw new Error(`${path || '<root>'}: ${forbidden} is not allowed in a structural CRD schema`);
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if (key === 'additionalProperties' && (value === false || node['x-kubernetes-preserve-unknown-fields']))
      continue;
    // zod spells out an ISO regex beside format date-time; the API server checks the format itself.
    if (key === 'pattern' && node.format === 'date-time') continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, child]) => [
          name,
          normalize(child, `${path}.${name}`),
        ]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object' && value) {
      out[key] = normalize(value as JsonSchema, `${path}[]`);
    } else {
      out[key] = value;
    }
  }
  if (out.type === 'object' && out.additionalProperties && typeof out.additionalProperties === 'object') {
    if (Object.keys(out.additionalProperties).length === 0) {
      delete out.additionalProperties;
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
  }
  return out;
}
