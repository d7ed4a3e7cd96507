/** CSV cells for the sales export. */

/** `a` → 'a; cells a spreadsheet would read as a formula get a leading quote; then RFC 4180 quoting. */
export function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
