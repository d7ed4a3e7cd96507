/**
 * A plain text table for a terminal of `width` columns (default 80): columns padded to their widest cell,
 * two spaces apart; when the table is wider than `width`, the `flex` column (a free-text one) is cut with
 * "…". Columns listed in `right` are right-aligned (amounts, counts). `notes[i]`, when given, is printed
 * under row `i`, indented and wrapped at `width` (for text too long for a column, such as a reason).
 */
export function formatColumns(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  opts: { flex?: number; right?: readonly number[]; width?: number; notes?: readonly (string | null)[] } = {},
): string {
  const width = opts.width ?? 80;
  // A loop, not `Math.max(...column)`: a spread of a large result overflows the call stack (issue 30).
  const widths = headers.map((h) => h.length);
  for (const r of rows)
    for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i] ?? 0, (r[i] ?? "").length);
  const total = widths.reduce((a, w) => a + w, 0) + 2 * (widths.length - 1);
  const flex = opts.flex;
  if (flex !== undefined && total > width) {
    const others = total - (widths[flex] ?? 0);
    widths[flex] = Math.max((headers[flex] ?? "").length, width - others);
  }
  const cell = (text: string, i: number) => {
    const w = widths[i] ?? 0;
    const cut = text.length > w ? `${text.slice(0, Math.max(0, w - 1))}…` : text;
    return opts.right?.includes(i) ? cut.padStart(w) : cut.padEnd(w);
  };
  const line = (r: readonly string[]) =>
    headers
      .map((_, i) => cell(r[i] ?? "", i))
      .join("  ")
      .trimEnd();
  const out = [line(headers)];
  rows.forEach((r, i) => {
    out.push(line(r));
    const note = opts.notes?.[i];
    if (note) for (const l of wrap(note, width - 4)) out.push(`    ${l}`);
  });
  return `${out.join("\n")}\n`;
}

/** Words into lines of at most `width` characters (a longer word is cut). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    for (let w = word; w !== ""; w = w.slice(width)) {
      const piece = w.slice(0, width);
      if (cur === "") cur = piece;
      else if (cur.length + 1 + piece.length <= width) cur = `${cur} ${piece}`;
      else {
        lines.push(cur);
        cur = piece;
      }
      if (w.length <= width) break;
    }
  }
  if (cur !== "") lines.push(cur);
  return lines;
}
