// Text an attacker writes where the CLI will print it (a release's status, an API's answer): every
// kind of control sequence a terminal obeys, and how to find one in what was printed.

/** Screen clear, OSC 52 clipboard write, window titles (BEL and ST ended), C1 CSI, CR and LF. */
export const HOSTILE =
  '\x1b[2J\x1b[Hcleared\x1b]52;c;ZWNobyBoaQ==\x07\x1b]0;title\x07\x1b]2;title\x1b\\\u009b31mred\rover\nrow';

/** Any character a terminal acts on: C0 (ESC, BEL, CR, LF, tab...), DEL and C1 (CSI 0x9b, ST, OSC). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
export const TERMINAL_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
