import { describe, expect, it } from "vitest";
import type { Screen } from "./display.js";
import { createSimDisplay } from "./sim.js";

describe("createSimDisplay", () => {
  it("records changed screens only and tells listeners synchronously", () => {
    const d = createSimDisplay();
    const seen: Screen[] = [];
    const off = d.onShow((s) => seen.push(s));
    expect(d.last()).toBeUndefined();
    d.show({ kind: "idle", checkinUri: "servicepos://pos?id=123456789012345&source=qr", message: "Hi" });
    d.show({ kind: "idle", checkinUri: "servicepos://pos?id=123456789012345&source=qr", message: "Hi" });
    d.show({ kind: "approveInApp", amount: 300, currency: "DKK" });
    expect(d.screens.map((s) => s.kind)).toEqual(["idle", "approveInApp"]);
    expect(seen).toEqual(d.screens);
    off();
    d.show({ kind: "thankYou", amount: 300, currency: "DKK" });
    expect(seen).toHaveLength(2);
    expect(d.last()).toEqual({ kind: "thankYou", amount: 300, currency: "DKK" });
  });

  it("isolates a throwing listener and ignores screens after close", async () => {
    const d = createSimDisplay();
    const seen: string[] = [];
    d.onShow(() => {
      throw new Error("observer bug");
    });
    d.onShow((s) => seen.push(s.kind));
    expect(() => d.show({ kind: "vending", amount: 1, currency: "DKK" })).not.toThrow();
    expect(seen).toEqual(["vending"]);
    await d.close();
    d.show({ kind: "cancelled", reason: "x" });
    expect(d.screens).toHaveLength(1);
  });
});
