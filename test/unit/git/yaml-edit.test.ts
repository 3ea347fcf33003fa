// The values-file edit: only the field's scalar changes (or its lines are added); every other
// byte of the file stays as written.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { decodeFile, encodeFile } from '../../../src/git/file-bytes.ts';
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

describe('setYamlField on layouts that read back as something else (issue 39)', () => {
  it('an empty value followed by a comment keeps the space before the comment', () => {
    const next = set('staticExport:\n  version: # set by static-export\n  x: 1\n');
    expect(next).toBe('staticExport:\n  version: sha256-new # set by static-export\n  x: 1\n');
    expect(parseYaml(next as string).staticExport.version).toBe('sha256-new');
  });

  it.each([
    ['!!int', 'staticExport:\n  version: !!int 1 # c\n', 'staticExport:\n  version: sha256-new # c\n'],
    ['a local tag', 'staticExport:\n  version: !custom "1"\n', 'staticExport:\n  version: "sha256-new"\n'],
    ['!!str, kept', 'staticExport:\n  version: !!str 1\n', 'staticExport:\n  version: !!str sha256-new\n'],
  ])('an explicit tag contradicting a string goes: %s', (_title, source, written) => {
    const next = set(source);
    expect(next).toBe(written);
    expect(parseYaml(next as string).staticExport.version).toBe('sha256-new');
  });

  it('an anchored value (others may alias it): GitFieldInvalid naming the anchor', () => {
    expect(failure('staticExport:\n  version: &v old\nother: *v\n')).toEqual({
      reason: 'GitFieldInvalid',
      message:
        'staticExport.version has the anchor &v: values aliasing it would change with it; remove the anchor',
    });
  });
});

describe('the file is edited byte for byte', () => {
  it('bytes that are not UTF-8 (a Latin-1 comment) stay as they were; only the value changes', () => {
    const latin1 = Buffer.from(
      '# caf\xe9 cr\xe8me (Latin-1)\nstaticExport:\n  version: old # \xa7 5\n',
      'latin1',
    );
    const next = encodeFile(set(decodeFile(latin1)) as string);
    expect(next).toEqual(
      Buffer.from('# caf\xe9 cr\xe8me (Latin-1)\nstaticExport:\n  version: sha256-new # \xa7 5\n', 'latin1'),
    );
  });

  it('every byte string survives decoding and encoding unchanged', () => {
    const samples = [
      Buffer.from('plain ascii\n'),
      Buffer.from('utf-8: café €  𝄞\n'),
      Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xe2, 0x82]),
      Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0xc0, 0xaf, 0xf0, 0x9f, 0x98, 0x80]),
    ];
    for (let i = 0; i < 256; i++) samples.push(Buffer.from([0x61, i, 0x62]));
    for (const bytes of samples) expect(encodeFile(decodeFile(bytes))).toEqual(bytes);
  });
});
