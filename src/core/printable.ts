/**
 * Text taken from a file or a line (a config key, a file name) that ends up in an error message or on a
 * console. Binary junk must not print kilobytes of raw bytes, move the cursor, or hide text with bidi
 * controls, so every such path goes through `printable`: control, format, separator, private-use and
 * unassigned characters are escaped, and the result is capped.
 */

/** Characters shown at most, by default, from one piece of file content in a message. */
export const MAX_SHOWN_CHARS = 200;

/** Controls (C0, DEL, C1), format characters (bidi overrides, zero-width), surrogates, private use,
 * unassigned code points, and the line and paragraph separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

/**
 * `text` with every unsafe character escaped (`\x1b`, `\u{202e}`) and at most `max` characters of the
 * input shown; a longer text ends with `…(N more characters)`. A backslash is shown as is.
 */
export function printable(text: string, max = MAX_SHOWN_CHARS): string {
  let out = "";
  let count = 0;
  for (const ch of text) {
    if (count < max) out += UNSAFE.test(ch) ? escaped(ch) : ch;
    count++;
  }
  return count > max ? `${out}…(${count - max} more characters)` : out;
}

function escaped(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return cp < 0x100 ? `\\x${cp.toString(16).padStart(2, "0")}` : `\\u{${cp.toString(16)}}`;
}
