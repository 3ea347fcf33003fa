// Every reason the operator can write is documented: the code takes its reasons from the lists in
// reasons.ts (the types allow no other), and the README's two reason tables name exactly those.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONDITION_REASONS, EVENT_REASONS, FAILURE_REASONS } from '../../../src/crd/reasons.ts';

const README = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');

/** The reasons named in the first column of the table under `header`. */
function documented(header: string): string[] {
  const start = README.indexOf(`${header}\n|---|`);
  expect(start, `README has a table headed ${header}`).toBeGreaterThanOrEqual(0);
  const rows = README.slice(start).split('\n').slice(2);
  const table = rows.slice(
    0,
    rows.findIndex((l) => !l.startsWith('|')),
  );
  return table.flatMap((row) =>
    [...(row.split('|')[1] ?? '').matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1] ?? ''),
  );
}

const sorted = (names: readonly string[]) => [...new Set(names)].sort();

describe('reasons', () => {
  it('every condition reason is in the README table of Ready reasons, and nothing else is', () => {
    expect(sorted(documented('| `Ready` reason | meaning and what to do |'))).toEqual(
      sorted(CONDITION_REASONS),
    );
  });

  it('every event reason but the failures (documented above) is in the Event reason table, and nothing else is', () => {
    const own = EVENT_REASONS.filter((r) => !(FAILURE_REASONS as readonly string[]).includes(r));
    const table = documented('| Event reason | when |');
    // Failures that are also events of their own (ExportFailed, PublishGateFailed, …) may be listed there.
    expect(sorted(table.filter((r) => !(FAILURE_REASONS as readonly string[]).includes(r)))).toEqual(
      sorted(own),
    );
    for (const r of table) expect(EVENT_REASONS as readonly string[]).toContain(r);
  });

  it('names each reason once per list', () => {
    for (const list of [CONDITION_REASONS, EVENT_REASONS, FAILURE_REASONS]) {
      expect(new Set(list).size).toBe(list.length);
    }
  });
});
