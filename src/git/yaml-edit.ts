// Surgical edits of YAML text: a scalar's source range is replaced, or lines are inserted after a
// block mapping's or sequence's last entry; every other byte of the file (comments, layout, quoting
// elsewhere) stays as written. Re-stringifying a document would reformat what people keep in Git.
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Node,
  parseAllDocuments,
  parseDocument,
  parse as parseYaml,
  type Scalar,
} from 'yaml';
import { GitFailure } from './types.ts';

/** The one document of a YAML file; not YAML, or several documents: GitFieldInvalid (no content quoted). */
export function parseSingleDocument(source: string, path: string): Document {
  const docs = parseAllDocuments(source);
  const broken = docs.flatMap((d) => d.errors);
  if (broken.length > 0) {
    // Only the error's code and position: the yaml library's own message quotes the file's lines.
    const where = broken[0]?.linePos?.[0];
    const at = where ? ` at line ${where.line}, column ${where.col}` : '';
    throw new GitFailure('GitFieldInvalid', `${path} is not valid YAML (${broken[0]?.code}${at})`);
  }
  if (docs.length > 1) {
    throw new GitFailure(
      'GitFieldInvalid',
      `${path} holds ${docs.length} YAML documents; write-back edits a file with one`,
    );
  }
  // An empty file (or only comments) is one document without contents.
  return docs[0] ?? parseDocument(source);
}

/** Whether `text` reads back as that same string when written without quotes. */
function plainSafe(text: string): boolean {
  if (!/^[A-Za-z0-9_./+-][\w./+:@=~-]*$/.test(text) || text.endsWith(':')) return false;
  return parseYaml(text) === text;
}

/** `value` as a YAML scalar, in the quoting style the replaced scalar used where that reads back. */
export function renderScalar(value: string, style?: Scalar['type']): string {
  if (style === 'QUOTE_SINGLE' && !/[\n\r\t]/.test(value)) return `'${value.replaceAll("'", "''")}'`;
  if (style !== 'QUOTE_DOUBLE' && style !== 'QUOTE_SINGLE' && plainSafe(value)) return value;
  // JSON's escapes are a subset of YAML's double-quoted ones.
  return JSON.stringify(value);
}

function renderKey(key: string): string {
  return /^[A-Za-z0-9_][\w.-]*$/.test(key) ? key : JSON.stringify(key);
}

function describeNode(node: unknown): string {
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a sequence';
  if (isAlias(node)) return 'an alias';
  return 'a scalar';
}

/** The column a node starts at. */
function columnOf(source: string, offset: number): number {
  return offset - (source.lastIndexOf('\n', offset - 1) + 1);
}

/** The offset where a line after the one holding `end` starts (`\n` added at a file's end). */
function lineAfter(source: string, end: number): { at: number; lead: string } {
  if (end > 0 && source[end - 1] === '\n') return { at: end, lead: '' };
  const newline = source.indexOf('\n', end);
  return newline === -1 ? { at: source.length, lead: '\n' } : { at: newline + 1, lead: '' };
}

/** Lines (each ending in `\n`) inserted after a block collection's last entry. */
export function appendToBlock(source: string, collection: Node, lines: string): string {
  const end = collection.range?.[1] ?? source.length;
  const { at, lead } = lineAfter(source, end);
  return source.slice(0, at) + lead + lines + source.slice(at);
}

/** `keys` nested down to `leaf` as block YAML at `indent`, each line ending in `\n`. */
export function renderNested(keys: string[], leaf: string, indent: number): string {
  return keys
    .map((key, i) => {
      const pad = ' '.repeat(indent + 2 * i);
      return i === keys.length - 1 ? `${pad}${renderKey(key)}:${leaf}\n` : `${pad}${renderKey(key)}:\n`;
    })
    .join('');
}

function pairOf(map: Node, key: string) {
  if (!isMap(map)) return undefined;
  return map.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
}

const STRING_TAG = 'tag:yaml.org,2002:str';

/**
 * Replaces a scalar's source with `text` (a block scalar's final line break kept). An explicit tag
 * other than !!str goes with it (`!!int sha256-…` is not a string Helm can read); a comment right
 * after an empty value keeps a space before it (`v:# c` would read `# c` as part of the value).
 */
function replaceScalar(source: string, key: Node, scalar: Scalar, text: string): string {
  const [start, end] = scalar.range ?? [0, 0];
  const keepBreak = end > start && source[end - 1] === '\n' ? '\n' : '';
  const colon = source.indexOf(':', key.range?.[1] ?? start);
  const untag = scalar.tag !== undefined && scalar.tag !== STRING_TAG && colon !== -1 && colon < start;
  const from = untag ? colon + 1 : start;
  const space = untag || (start === end && source[start - 1] === ':') ? ' ' : '';
  const after = start === end && source[end] === '#' ? ' ' : '';
  return source.slice(0, from) + space + text + after + keepBreak + source.slice(end);
}

/**
 * Sets the mapping entry at `keys` (from the document's root) to `leaf`, creating missing mappings.
 * `leaf.render(indent)` renders the value after `key:` for a key at column `indent` (a scalar as
 * ` v`, a block as `\n` plus lines), `leaf.scalar(style)` replaces an existing scalar, and
 * `same(node)` says the current value needs no change. Returns the new
 * text, or undefined when unchanged. A key crossing a non-mapping: GitFieldInvalid naming it.
 */
export function setIn(
  source: string,
  doc: Document,
  keys: string[],
  leaf: {
    render: (indent: number) => string;
    scalar?: (style: Scalar['type']) => string;
    same: (node: unknown) => boolean;
  },
): string | undefined {
  const field = keys.join('.');
  let node: unknown = doc.contents;
  if (node === null || (isScalar(node) && node.value === null && node.source === '')) {
    const text = renderNested(keys, leaf.render(2 * (keys.length - 1)), 0);
    return source.length === 0 || source.endsWith('\n') ? source + text : `${source}\n${text}`;
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const here = keys.slice(0, i).join('.') || 'the document';
    // A numeric key selects an existing entry of a sequence (Argo CD's helm.parameters).
    if (isSeq(node) && /^\d+$/.test(key) && i < keys.length - 1 && node.items[Number(key)]) {
      node = node.items[Number(key)];
      continue;
    }
    if (!isMap(node))
      throw new GitFailure('GitFieldInvalid', `${field}: ${here} is ${describeNode(node)}, not a mapping`);
    if (node.flow) {
      throw new GitFailure(
        'GitFieldInvalid',
        `${field}: ${here} is a flow mapping ({…}); write it as a block mapping`,
      );
    }
    const pair = pairOf(node, key);
    if (!pair) {
      const first = node.items[0]?.key as Node | undefined;
      const indent = columnOf(source, first?.range?.[0] ?? 0);
      const rest = keys.slice(i);
      return appendToBlock(
        source,
        node,
        renderNested(rest, leaf.render(indent + 2 * (rest.length - 1)), indent),
      );
    }
    const value = pair.value;
    if (i === keys.length - 1) {
      if (leaf.same(value)) return undefined;
      if (isScalar(value) && value.anchor) {
        throw new GitFailure(
          'GitFieldInvalid',
          `${field} has the anchor &${value.anchor}: values aliasing it would change with it; remove the anchor`,
        );
      }
      if (isScalar(value) && leaf.scalar)
        return replaceScalar(source, pair.key as Node, value, leaf.scalar(value.type));
      if (isScalar(value) && value.value === null)
        return replaceNull(
          source,
          pair.key as Node,
          value,
          leaf.render(columnOf(source, (pair.key as Node).range?.[0] ?? 0)),
        );
      throw new GitFailure('GitFieldInvalid', `${field} is ${describeNode(value)}, not a scalar`);
    }
    if (isScalar(value) && value.value === null) {
      const keyNode = pair.key as Node;
      const indent = columnOf(source, keyNode.range?.[0] ?? 0) + 2;
      const rest = keys.slice(i + 1);
      return replaceNull(
        source,
        keyNode,
        value,
        `\n${renderNested(rest, leaf.render(indent + 2 * (rest.length - 1)), indent).slice(0, -1)}`,
      );
    }
    node = value;
  }
  return undefined;
}

/** An empty (or `~`/`null`) value replaced by `text` written right after its `key:`. */
function replaceNull(source: string, key: Node, value: Scalar, text: string): string {
  const [start, end] = value.range ?? [0, 0];
  if (text.startsWith('\n')) {
    // A block goes on the lines below the key, after whatever comment ends the key's line.
    const lineEnd = source.indexOf('\n', end);
    const cut = lineEnd === -1 ? source.length : lineEnd;
    const before = start === end ? source.slice(0, start) : source.slice(0, start).replace(/[ \t]+$/, '');
    const head = before + source.slice(end, cut);
    return head + text + (lineEnd === -1 ? '\n' : '') + source.slice(cut);
  }
  const keyEnd = key.range?.[1] ?? start;
  return `${source.slice(0, keyEnd)}:${text}${source.slice(end)}`;
}

/** Sets `field` (dotted) to the string `version`; undefined when the file already holds it. */
export function setYamlField(
  source: string,
  path: string,
  field: string,
  version: string,
): string | undefined {
  const keys = field.split('.');
  if (keys.some((k) => k === '')) {
    throw new GitFailure(
      'GitFieldInvalid',
      `field ${JSON.stringify(field)} has an empty key; write it dotted, like staticExport.version`,
    );
  }
  const doc = parseSingleDocument(source, path);
  const next = setIn(source, doc, keys, {
    render: () => ` ${renderScalar(version)}`,
    scalar: (style) => renderScalar(version, style),
    same: (node) => isScalar(node) && node.value === version,
  });
  if (next !== undefined) readsBack(next, path, field, keys, version);
  return next;
}

/**
 * What is committed must read as the version: the edit is checked by parsing its result, so a
 * layout the editor gets wrong is refused (GitFieldInvalid) instead of committed as something else.
 */
function readsBack(text: string, path: string, field: string, keys: unknown[], version: string): void {
  const written = parseSingleDocument(text, path).getIn(keys, true);
  if (!isScalar(written) || written.value !== version) {
    throw new GitFailure(
      'GitFieldInvalid',
      `${field} in ${path} could not be written so that it reads back as the version (its layout is not one the editor handles); write it as a plain "key: value" line`,
    );
  }
}
