// docs/quickstart.md shows exactly the commands the quickstart tests run (test/support/cluster/quickstart.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QUICKSTART, shellLine, shellWord } from '../support/cluster/quickstart.ts';

const page = readFileSync(new URL('../../docs/quickstart.md', import.meta.url), 'utf8');
/** The page's shell blocks, continuation lines joined and runs of blanks inside a line made one, as a shell reads them. */
const shown = [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
  .map((m) => (m[1] ?? '').replace(/\\\n\s*/g, ' ').replace(/(?<=\S)[ \t]+/g, ' '))
  .join('\n');

describe('docs/quickstart.md', () => {
  it.each(QUICKSTART.map((c) => [c.argv.slice(0, 3).join(' '), c] as const))(
    'shows %s as the tests run it',
    (_name, command) => {
      expect(shown).toContain(shellLine(command));
    },
  );

  it('quotes what a shell would otherwise expand', () => {
    expect(shellWord('operator.allowedApiBaseUrls={http://x.docs.svc}')).toBe(
      "'operator.allowedApiBaseUrls={http://x.docs.svc}'",
    );
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord('--for=condition=Ready')).toBe('--for=condition=Ready');
  });
});
