import { describe, expect, it } from "vitest";
import { composeStatus, type StatusParts, screenReason, statusLine } from "./status.js";

const NONE: StatusParts = {
  connect: null,
  failure: null,
  doorOpen: false,
  serviceMode: false,
  stopping: false,
};
const unreachable = {
  code: "paymentUnreachable" as const,
  detail: "payment service unreachable: refused",
  retryAt: 9_500,
};

describe("unit status", () => {
  it("is in service exactly when there is no reason not to be", () => {
    expect(composeStatus(NONE)).toEqual({ inService: true, reasons: [] });
    expect(statusLine("vm-1", composeStatus(NONE), 0)).toBe("in service as vm-1");
  });

  it("lists every reason, most fundamental first, and says when vendd tries again", () => {
    const s = composeStatus({ ...NONE, connect: unreachable, doorOpen: true, serviceMode: true });
    expect(s.inService).toBe(false);
    expect(s.reasons.map((r) => r.code)).toEqual(["paymentUnreachable", "doorOpen", "serviceMode"]);
    expect(statusLine("vm-1", s, 1_000)).toBe(
      "out of service: payment service unreachable: refused; retry in 9 s | door open | service mode",
    );
  });

  it("keeps the STATUS line on one line whatever a detail holds", () => {
    const s = composeStatus({ ...NONE, failure: { code: "failure", detail: "a\nb\r\nc", retryAt: null } });
    expect(statusLine("vm-1", s, 0)).toBe("out of service: a b c");
  });

  it("gives the screen short words, never the technical detail", () => {
    expect(screenReason(unreachable)).toBe("Payment service unreachable");
    expect(screenReason({ code: "journal", detail: "journal write failed: SQLITE_FULL", retryAt: 1 })).toBe(
      "Journal cannot be written",
    );
  });
});
