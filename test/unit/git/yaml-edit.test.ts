// The values-file edit: only the field's scalar changes (or its lines are added); every other
// byte of the file stays as written.
import { describe, expect, it } from 'vitest';
import { setYamlField } from '../../../src/git/yaml-edit.ts';

const set = (source: string, version = 'sha256-new', field = 'staticExport.version') =>
  setYamlField(source, 'values.yaml', field, version);
const failure = (source: string, field = 'staticExport.version') => {
  try {
    set(source, 'sha256-new', field);
  } catch (error) {
    return { reason: (error as { reason?: string }).reason, message: (error as Error).message };
  }
  return undefined;
};

describe('setYamlField', () => {
  it.each([
    [
      'the scalar, its quotes and comments kept',
      '# top\nstaticExport:\n  enabled: true # on\n  version: "old"   # the version\nother: 1\n',
      '# top\nstaticExport:\n  enabled: true # on\n  version: "sha256-new"   # the version\nother: 1\n',
    ],
    ['single quotes kept', "staticExport:\n  version: 'old'\n", "staticExport:\n  version: 'sha256-new'\n"],
    ['plain kept', 'staticExport:\n  version: old\n', 'staticExport:\n  version: sha256-new\n'],
    [
      'an empty value',
      'staticExport:\n  version:\n  x: 1\n',
      'staticExport:\n  version: sha256-new\n  x: 1\n',
    ],
    [
      'a block scalar',
      'staticExport:\n  version: |\n    old\n  x: 1\n',
      'staticExport:\n  version: sha256-new\n  x: 1\n',
    ],
    [
      "a missing key after the mapping's last entry",
      'staticExport:\n  enabled: true # on\nother: 1\n',
      'staticExport:\n  enabled: true # on\n  version: sha256-new\nother: 1\n',
    ],
    [
      'a file without a final newline',
      'staticExport:\n  enabled: true',
      'staticExport:\n  enabled: true\n  version: sha256-new\n',
    ],
    ['missing mappings created', 'other: 1\n', 'other: 1\nstaticExport:\n  version: sha256-new\n'],
    ['an empty file', '', 'staticExport:\n  version: sha256-new\n'],
    ['a file of comments', '# nothing yet\n', '# nothing yet\nstaticExport:\n  version: sha256-new\n'],
    [
      'an empty parent mapping, its comment kept',
      'staticExport:  # set by the operator\nother: 1\n',
      'staticExport:  # set by the operator\n  version: sha256-new\nother: 1\n',
    ],
    ['a null parent', 'staticExport: ~\n', 'staticExport:\n  version: sha256-new\n'],
    ['four-space indentation', 'a:\n    b: 1\n', 'a:\n    b: 1\n    version: sha256-new\n'],
  ])('%s', (_, before, after) => {
    const field = before.startsWith('a:') ? 'a.version' : 'staticExport.version';
    expect(set(before, 'sha256-new', field)).toBe(after);
  });

  it('a version YAML would read as another type is quoted', () => {
    expect(set('v: x\n', '1.0', 'v')).toBe('v: "1.0"\n');
    expect(set('v: x\n', 'true', 'v')).toBe('v: "true"\n');
    expect(set('v: x\n', 'a: b', 'v')).toBe('v: "a: b"\n');
    expect(set('v: 1.0\n', '1.0', 'v')).toBe('v: "1.0"\n');
  });

  it('unchanged when the file holds the version (any quoting)', () => {
    expect(set('staticExport:\n  version: sha256-new\n')).toBeUndefined();
    expect(set('staticExport:\n  version: "sha256-new"\n')).toBeUndefined();
  });

  it.each([
    ['staticExport: 3\n', 'staticExport.version: staticExport is a scalar, not a mapping'],
    ['- a\n', 'staticExport.version: the document is a sequence, not a mapping'],
    ['staticExport:\n  version:\n    a: 1\n', 'staticExport.version is a mapping, not a scalar'],
    [
      'staticExport: {enabled: true}\n',
      'staticExport.version: staticExport is a flow mapping ({…}); write it as a block mapping',
    ],
    ['a: 1\n---\nb: 2\n', 'values.yaml holds 2 YAML documents; write-back edits a file with one'],
    ['secret: [\n', 'values.yaml is not valid YAML (BAD_INDENT at line 2, column 1)'],
  ])('%j: GitFieldInvalid, nothing of the file quoted', (source, message) => {
    expect(failure(source)).toEqual({ reason: 'GitFieldInvalid', message });
  });

  it('an empty key in the field: GitFieldInvalid naming the form', () => {
    expect(failure('a: 1\n', 'staticExport..version')?.message).toBe(
      'field "staticExport..version" has an empty key; write it dotted, like staticExport.version',
    );
  });
});
