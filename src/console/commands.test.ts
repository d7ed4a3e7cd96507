import { describe, expect, it } from "vitest";
import { cleanLine, complete, helpText, parseLine } from "./commands.js";
import { fitWidth, render, WIDTH } from "./render.js";

const TODAY = "2026-11-24";

describe("console command parsing", () => {
  it("turns each command into its request", () => {
    expect(parseLine("status", TODAY)).toEqual({ kind: "request", cmd: "status", args: {} });
    expect(parseLine("sales", TODAY)).toMatchObject({ args: { from: TODAY, to: TODAY } });
    expect(parseLine("sales 2026-01-02", TODAY)).toMatchObject({
      args: { from: "2026-01-02", to: "2026-01-02" },
    });
    expect(parseLine("sales --from 2026-01-01 --to 2026-01-31", TODAY)).toMatchObject({
      args: { from: "2026-01-01", to: "2026-01-31" },
    });
    expect(parseLine("journal vm-1-17-3", TODAY)).toMatchObject({
      args: { view: "session", session: "vm-1-17-3" },
    });
    expect(parseLine("config set unit.name A new name", TODAY)).toMatchObject({
      args: { action: "set", key: "unit.name", value: "A new name" },
    });
    expect(parseLine("service out Restocking now", TODAY)).toMatchObject({
      args: { mode: "out", reason: "Restocking now" },
    });
    expect(parseLine("test-vend 2.50", TODAY)).toMatchObject({ args: { amount: "2.50" } });
    expect(parseLine("logs --follow", TODAY)).toMatchObject({ follow: true, args: { follow: true } });
    expect(parseLine("   ", TODAY)).toEqual({ kind: "empty" });
  });

  it("answers bad usage locally with the usage line", () => {
    for (const line of [
      "status now",
      "sales yesterday",
      "config set",
      "service sideways",
      "test-vend lots",
      "logs -f",
    ])
      expect(parseLine(line, TODAY), line).toMatchObject({
        kind: "error",
        text: expect.stringMatching(/^usage: /),
      });
    expect(parseLine("rm -rf /", TODAY)).toMatchObject({
      kind: "error",
      text: expect.stringMatching(/unknown command/),
    });
    expect(helpText("nope")).toMatch(/no command/);
  });

  it("completes commands and arguments", () => {
    expect(complete("se")).toEqual([["service"], "se"]);
    expect(complete("config s")).toEqual([["show", "set"], "s"]);
    expect(complete("config set console.i")).toEqual([["console.idleTimeoutMinutes"], "console.i"]);
    expect(complete("help te")).toEqual([["test-vend"], "te"]);
  });

  it("cleans escape sequences and controls, refuses over-long lines", () => {
    expect(cleanLine("\x1b[31mstatus\x1b[0m\x00")).toBe("status");
    expect(cleanLine("x".repeat(2000))).toBeNull();
  });

  it("renders within 80 columns and shows control characters escaped", () => {
    const text = render("status", {
      unitId: "vm-1\x1b[2J",
      inService: false,
      reasons: [{ detail: "x".repeat(300) }],
      links: { vmc: "up", payment: "down", journal: "up" },
      lastVends: [],
      audit: { ok: false, detail: "row 3 was changed" },
    });
    for (const line of fitWidth(text).split("\n")) expect(line.length).toBeLessThanOrEqual(WIDTH);
    expect(text).not.toContain("\x1b");
    expect(text).toContain("BROKEN");
  });
});
