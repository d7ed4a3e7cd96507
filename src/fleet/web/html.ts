/**
 * HTML for the dashboard's server-rendered pages: a tagged template that escapes every interpolated value
 * unless it is already {@link Html}. Whatever a unit, a report or a manager typed reaches a page only through
 * here, so `<script>` in a unit label is shown as text.
 */

/** Markup that is already safe (built by {@link html} or {@link raw}). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for an element's content or a quoted attribute value. */
export function esc(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

type Part = Html | string | number | bigint | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map((p: Part) => render(p)).join("");
  if (part === null || part === undefined || part === false) return "";
  return esc(part);
}

/** `html\`<td>${label}</td>\``: interpolations escaped, arrays joined, null/undefined/false omitted. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Trusted markup as is: only for constants written in this code base, never for data. */
export function raw(markup: string): Html {
  return new Html(markup);
}
