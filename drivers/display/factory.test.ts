import { describe, expect, it } from "vitest";
import type { DisplayKind } from "./display.js";
import { createDisplay, DisplayError } from "./factory.js";

describe("createDisplay", () => {
  it("creates each kind", async () => {
    for (const kind of ["terminal", "sim", "none"] as const) {
      const d = await createDisplay(kind, { out: process.stderr });
      expect(d.kind).toBe(kind);
      await d.close();
    }
  });

  it("none drops screens without failing", async () => {
    const d = await createDisplay("none");
    expect(() => d.show({ kind: "outOfService", reason: "x" })).not.toThrow();
  });

  it("refuses an unknown kind and lists the valid names", async () => {
    const err = await createDisplay("lcd" as DisplayKind).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DisplayError);
    expect(err).toMatchObject({ code: "unknownKind" });
    expect((err as Error).message).toBe('unknown display kind "lcd"; valid: terminal, sim, none');
  });
});
