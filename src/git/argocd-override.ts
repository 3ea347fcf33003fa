// Argo CD's per-application override file, `.argocd-source-<application>.yaml` beside the
// Application's source: Argo CD merges its `helm.parameters` into the Application at every sync,
// so a version committed there survives an app-of-apps parent or a `kubectl apply` from Git.
import { posix } from 'node:path';
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { GitFailure } from './types.ts';
import { appendToBlock, parseSingleDocument, renderScalar, setIn } from './yaml-edit.ts';

const OVERRIDE_FILE = /^\.argocd-source-.+\.yaml$/;

export function isArgoCdOverrideFile(path: string): boolean {
  return OVERRIDE_FILE.test(posix.basename(path));
}

/** A `helm.parameters` entry as Argo CD writes it (`argocd app set -p`), at `indent` (its dash's column). */
function parameterItem(name: string, value: string, indent: number): string {
  const pad = ' '.repeat(indent);
  return `${pad}- name: ${renderScalar(name)}\n${pad}  value: ${renderScalar(value)}\n${pad}  forceString: true\n`;
}

function isParameter(node: unknown, name: string): node is YAMLMap {
  return isMap(node) && node.get('name') === name;
}

/**
 * The override file with the Helm parameter `name` set to the string `value` (forceString, so
 * Helm never reads a digest-like version as a number); other parameters and the rest of the file
 * kept as written. `source` undefined: the file is created. Undefined when it already holds it.
 */
export function setOverrideParameter(
  source: string | undefined,
  path: string,
  name: string,
  value: string,
): string | undefined {
  let text = source ?? '';
  const doc = parseSingleDocument(text, path);
  const parameters = doc.getIn(['helm', 'parameters'], true);
  if (parameters === undefined || (isScalar(parameters) && parameters.value === null)) {
    return setIn(text, doc, ['helm', 'parameters'], {
      render: (indent) => `\n${parameterItem(name, value, indent).slice(0, -1)}`,
      same: () => false,
    });
  }
  if (!isSeq(parameters) || parameters.flow) {
    throw new GitFailure('GitFieldInvalid', `${path}: helm.parameters is not a block sequence of parameters`);
  }
  const index = parameters.items.findIndex((item) => isParameter(item, name));
  if (index === -1) {
    const first = parameters.items[0] as Node | undefined;
    const start = first?.range?.[0] ?? 0;
    const dash = text.lastIndexOf('-', start);
    const indent = dash - (text.lastIndexOf('\n', dash) + 1);
    return appendToBlock(text, parameters, parameterItem(name, value, indent));
  }
  // Two edits of one entry: each re-parses the text the previous one left.
  for (const [key, wanted, same] of [
    ['value', value, (n: unknown) => isScalar(n) && n.value === value],
    ['forceString', 'true', (n: unknown) => isScalar(n) && n.value === true],
  ] as const) {
    const current = parseSingleDocument(text, path);
    const edited = setIn(text, current, ['helm', 'parameters', String(index), key], {
      render: () => ` ${key === 'forceString' ? wanted : renderScalar(wanted)}`,
      scalar: (style) => (key === 'forceString' ? wanted : renderScalar(wanted, style)),
      same,
    });
    if (edited !== undefined) text = edited;
  }
  return text === source ? undefined : text;
}
