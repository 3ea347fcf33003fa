// Argo CD's per-application override file, `.argocd-source-<application>.yaml` beside the
// Application's source: Argo CD merges its `helm.parameters` into the Application at every sync,
// so a version committed there survives an app-of-apps parent or a `kubectl apply` from Git.
import { posix } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, type Node, type YAMLMap, type YAMLSeq } from 'yaml';
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
    const created = setIn(text, doc, ['helm', 'parameters'], {
      render: (indent) => `\n${parameterItem(name, value, indent).slice(0, -1)}`,
      same: () => false,
    });
    return created === undefined ? undefined : checked(created, path, name, value);
  }
  if (!isSeq(parameters) || parameters.flow) {
    throw new GitFailure('GitFieldInvalid', `${path}: helm.parameters is not a block sequence of parameters`);
  }
  plainParameters(parameters, path);
  const named = parameters.items.flatMap((item, i) => (isParameter(item, name) ? [i] : []));
  if (named.length > 1) {
    throw new GitFailure(
      'GitFieldInvalid',
      `${path}: helm.parameters names ${name} ${named.length} times (Argo CD would take one of them, not necessarily the one written): keep one entry`,
    );
  }
  const index = named[0] ?? -1;
  if (index === -1) {
    const first = parameters.items[0] as Node | undefined;
    const start = first?.range?.[0] ?? 0;
    const dash = text.lastIndexOf('-', start);
    const indent = dash - (text.lastIndexOf('\n', dash) + 1);
    return checked(appendToBlock(text, parameters, parameterItem(name, value, indent)), path, name, value);
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
  return text === source ? undefined : checked(text, path, name, value);
}

/**
 * Aliases and merge keys in helm.parameters are refused: the entry written would not be the one
 * Argo CD reads (an alias of another entry, a name merged in from elsewhere, left beside the new).
 */
function plainParameters(parameters: YAMLSeq, path: string): void {
  parameters.items.forEach((item, i) => {
    const aliased =
      isAlias(item) ||
      (isMap(item) &&
        item.items.some(
          (p) => isAlias(p.key) || isAlias(p.value) || (isScalar(p.key) && p.key.value === '<<'),
        ));
    if (aliased || (isMap(item) && item.anchor) || (isScalar(item) && item.anchor)) {
      throw new GitFailure(
        'GitFieldInvalid',
        `${path}: helm.parameters entry ${i + 1} uses an anchor, alias or merge key (&, * or <<): write the parameters out plainly, each name once`,
      );
    }
  });
}

/** `text` when it reads back with exactly one `name` parameter holding `value`; else GitFieldInvalid. */
function checked(text: string, path: string, name: string, value: string): string {
  const parameters = parseSingleDocument(text, path).getIn(['helm', 'parameters'], true);
  const entries = isSeq(parameters) ? parameters.items.filter((item) => isParameter(item, name)) : [];
  const entry = entries[0];
  if (entries.length !== 1 || !isMap(entry) || entry.get('value') !== value) {
    throw new GitFailure(
      'GitFieldInvalid',
      `${path}: the parameter ${name} could not be written so that it reads back as the version; write helm.parameters as a block sequence of name/value entries`,
    );
  }
  return text;
}
