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
