import { describe, expect, it } from "vitest";
import { SeamConfigError } from "../../src/core/seams.js";
import { createDisplay, type DisplayOptions } from "./factory.js";

describe("createDisplay", () => {
  it("creates each kind", async () => {
    for (const kind of ["terminal", "sim", "none"] as const) {
      const d = await createDisplay({ kind }, { out: process.stderr });
      expect(d.kind).toBe(kind);
      await d.close();
    }
  });

  it("none drops screens without failing", async () => {
    const d = await createDisplay({ kind: "none" });
    expect(() => d.show({ kind: "outOfService", reason: "x" })).not.toThrow();
  });

  it("refuses an unknown kind with the one seam error, listing the valid names", async () => {
    const err = await createDisplay({ kind: "lcd" } as unknown as DisplayOptions).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeamConfigError);
    expect(err).toMatchObject({
      seam: "display",
      validKinds: ["terminal", "framebuffer", "ssd1306", "sh1106", "sim", "none"],
    });
    expect((err as Error).message).toBe(
      'unknown display kind "lcd"; valid: terminal, framebuffer, ssd1306, sh1106, sim, none',
    );
  });
});
