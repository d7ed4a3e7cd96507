import { describe, expect, it } from "vitest";
import { normaliseExpiry } from "./expiry.js";

describe("a bundle's --expires", () => {
  it("takes a day (end of that day UTC) or an ISO date-time, in whole seconds", () => {
    expect(normaliseExpiry("2027-01-31")).toBe("2027-01-31T23:59:59Z");
    expect(normaliseExpiry("2027-01-31T10:00:00.5Z")).toBe("2027-01-31T10:00:00Z");
  });

  it("refuses a day that does not exist (JavaScript's Date.parse rolls 2026-02-30 over to March 2)", () => {
    expect(normaliseExpiry("2026-02-30")).toBeNull();
    expect(normaliseExpiry("2026-13-01")).toBeNull();
    expect(normaliseExpiry("next week")).toBeNull();
  });
});
