// Text from elsewhere (a release's status, an API's or receiver's answer, an error quoting either)
// printed for a human. A terminal obeys the control characters in what it prints: ESC starts
// sequences that clear the screen, set the window title or write the clipboard (OSC 52), BEL and
// C1's CSI (0x9b) end or start them, a carriage return overwrites the line and a newline forges
// table rows. Each is shown as a visible `\u001b`-style escape, so a reader sees something was there.

// C0 (tab and newline included), DEL and C1.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every control character written as `\uXXXX`, safe to print on a terminal. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, escaped);
}

// JSON.stringify escapes C0 but leaves DEL and C1 (CSI 0x9b included) as they are. In a JSON text
// they can only stand inside strings, where `\uXXXX` means the same character.
const RAW_IN_JSON = /[\u007f-\u009f]/g;

/** A JSON text with DEL and C1 escaped too: the same value, safe to print on a terminal. */
export function terminalSafeJson(json: string): string {
  return json.replace(RAW_IN_JSON, escaped);
}
