// Text from elsewhere made safe for a terminal: each control sequence an attacker would write into a
// release's status or an API's answer comes out as visible text, with nothing a terminal obeys.
import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalSafeJson } from '../../src/terminal-text.ts';
import { HOSTILE, TERMINAL_CONTROL } from '../support/fixtures/hostile-text.ts';

describe('terminalSafe', () => {
  it.each([
    ['a CSI screen clear', 'ok\x1b[2J\x1b[H', 'ok\\u001b[2J\\u001b[H'],
    ['an OSC 52 clipboard write', '\x1b]52;c;ZWNobyBoaQ==\x07', '\\u001b]52;c;ZWNobyBoaQ==\\u0007'],
    ['an OSC window title ended by BEL', '\x1b]0;pwned\x07', '\\u001b]0;pwned\\u0007'],
    ['an OSC window title ended by ST', '\x1b]2;pwned\x1b\\', '\\u001b]2;pwned\\u001b\\'],
    ['a C1 CSI and C1 OSC/ST', '\u009b2J\u009d0;t\u009c', '\\u009b2J\\u009d0;t\\u009c'],
    ['newlines forging a table row', 'ok\ndocs  evil  True', 'ok\\u000adocs  evil  True'],
    ['a carriage return overwriting the line', 'Failed\rReady  ', 'Failed\\u000dReady  '],
    ['a tab and DEL', 'a\tb\x7f', 'a\\u0009b\\u007f'],
  ])('shows %s as visible escapes', (_, hostile, shown) => {
    expect(terminalSafe(hostile)).toBe(shown);
    expect(terminalSafe(hostile)).not.toMatch(TERMINAL_CONTROL);
  });

  it('leaves printable text alone, other scripts and emoji included', () => {
    const text = 'Serving sha256-ab12 — café, 文档, 🚀 (100%) \\u001b as typed';
    expect(terminalSafe(text)).toBe(text);
  });
});

describe('terminalSafeJson', () => {
  it('escapes what JSON.stringify leaves raw (DEL, C1 CSI), keeping the same value', () => {
    const value = { message: `${HOSTILE}\x7f`, nested: ['\u009b2J'] };
    const json = JSON.stringify(value);
    expect(json).toMatch(TERMINAL_CONTROL);
    expect(terminalSafeJson(json)).not.toMatch(TERMINAL_CONTROL);
    expect(JSON.parse(terminalSafeJson(json))).toEqual(value);
  });
});
