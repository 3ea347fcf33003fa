// The custom resources' reference pages (docs/spec/) against the code: every field of each CRD's
// schema, as the API server gets it from the zod schemas, with its default; every reason the
// operator writes (src/crd/reasons.ts: the types allow no other). Both ways: nothing missing,
// nothing documented that the code does not have.
import { describe, expect, it } from 'vitest';
import { CRD_DEFINITIONS } from '../../../src/crd/manifests.ts';
import { CONDITION_REASONS, EVENT_REASONS, FAILURE_REASONS } from '../../../src/crd/reasons.ts';
import { toStructuralSchema } from '../../../src/crd/structural.ts';
import { type Schema, schemaFields } from '../../support/fixtures/doc-facts.ts';
import { codeSpans, readRepoFile, sectionRows } from '../../support/fixtures/markdown.ts';

/** The fields of the page's table under `heading`: first cell the field, third its default. */
function documentedFields(page: string, heading: string): Map<string, string> {
  return new Map(
    sectionRows(page, heading).map((row) => [
      codeSpans(row[0] ?? '')[0] ?? '',
      codeSpans(row[2] ?? '')[0] ?? '',
    ]),
  );
}

const pageOf = (kind: string) => `docs/spec/${kind.replace(/(?<!^)([A-Z])/g, '-$1').toLowerCase()}.md`;
const PAGES = CRD_DEFINITIONS.map((def) => pageOf(def.kind));

/** The reasons named in the first column of the `heading` tables of every spec page. */
function documentedReasons(heading: string): string[] {
  return PAGES.flatMap((path) =>
    sectionRows(readRepoFile(path), heading).flatMap((row) => codeSpans(row[0] ?? '')),
  );
}

const sorted = (names: readonly string[]) => [...new Set(names)].sort();

describe.each(CRD_DEFINITIONS.map((def) => [def.kind, def] as const))('docs/spec page of %s', (kind, def) => {
  const page = readRepoFile(pageOf(kind));

  it.each(['spec', 'status'] as const)('lists every %s field with its default, and no other', (part) => {
    const schema = schemaFields(toStructuralSchema(def[part]) as Schema, part);
    const documented = documentedFields(page, part);
    expect(sorted([...documented.keys()]), `${pageOf(kind)}, table under "${part}"`).toEqual(
      sorted([...schema.keys()]),
    );
    for (const [field, fallback] of schema)
      expect(documented.get(field), `default of ${field}`).toBe(fallback);
  });

  it('starts with its kind as title', () => {
    expect(page.startsWith(`# ${kind}\n`)).toBe(true);
  });
});

describe('reasons in docs/spec', () => {
  it('every condition reason is in a table of Ready reasons, and nothing else is', () => {
    expect(sorted(documentedReasons('Ready reasons'))).toEqual(sorted(CONDITION_REASONS));
  });

  it('every event reason but the failures (documented as Ready reasons) is in an Events table, and nothing else is', () => {
    const failures = FAILURE_REASONS as readonly string[];
    const table = documentedReasons('Events');
    // Failures that are also events of their own (ExportFailed, PublishGateFailed, …) may be listed there.
    expect(sorted(table.filter((r) => !failures.includes(r)))).toEqual(
      sorted(EVENT_REASONS.filter((r) => !failures.includes(r))),
    );
    for (const r of table) expect(EVENT_REASONS as readonly string[]).toContain(r);
  });

  it('names each reason once per list', () => {
    for (const list of [CONDITION_REASONS, EVENT_REASONS, FAILURE_REASONS]) {
      expect(new Set(list).size).toBe(list.length);
    }
  });
});
