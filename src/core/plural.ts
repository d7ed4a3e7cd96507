/** A count with its noun in the right number: `plural(1, "unit", "units")` is "1 unit", 2 is "2 units". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
