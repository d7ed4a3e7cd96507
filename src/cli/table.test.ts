import { describe, expect, it } from "vitest";
import { formatColumns, wrap } from "./table.js";

describe("80-column tables", () => {
  it("pads columns, right-aligns amounts, cuts the flex column to the width", () => {
    const text = formatColumns(["A", "AMOUNT", "NOTE"], [["x", "1.00", "n".repeat(100)]], {
      flex: 2,
      right: [1],
      width: 30,
    });
    const [head, row] = text.split("\n");
    expect(head).toBe("A  AMOUNT  NOTE");
    expect(row).toBe(`x    1.00  ${"n".repeat(18)}…`);
    expect(row).toHaveLength(30);
  });

  it("prints notes under their row, indented and wrapped", () => {
    const text = formatColumns(["A"], [["x"], ["y"]], {
      width: 20,
      notes: ["one two three four five six", null],
    });
    expect(text).toBe("A\nx\n    one two three\n    four five six\ny\n");
    expect(wrap("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });
});

describe("tables of any size (issue 30)", () => {
  it("125,000 rows with notes print without overflowing the call stack", () => {
    const rows: string[][] = [];
    const notes: string[] = [];
    for (let i = 0; i < 125_000; i++) {
      rows.push([`2026-11-24`, "amountMismatch", `vm${i % 20}`, `s${i}`, `${i}.00`]);
      notes.push(`journal captured ${i}, report paid ${i + 1}`);
    }
    const text = formatColumns(["day", "class", "unit", "session", "amount"], rows, {
      right: [4],
      width: 120,
      notes,
    });
    const lines = text.split("\n");
    expect(lines).toHaveLength(1 + 2 * 125_000 + 1);
    expect(lines[0]?.split(/ +/)).toEqual(["day", "class", "unit", "session", "amount"]);
    expect(lines.at(-3)).toBe("2026-11-24  amountMismatch  vm19  s124999  124999.00");
  });
});
