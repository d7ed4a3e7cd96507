import { describe, expect, it } from "vitest";
import { MAX_SHOWN_CHARS, printable } from "./printable.js";

describe("printable", () => {
  it("leaves ordinary text alone, Latin-1 letters and emoji included", () => {
    expect(printable("payment.v10.colour")).toBe("payment.v10.colour");
    expect(printable("Kaffe æøå ☕ 😀")).toBe("Kaffe æøå ☕ 😀");
  });

  it("escapes controls, DEL, C1, bidi and zero-width format characters, separators", () => {
    expect(printable("a\x00b\x1b[2Jc\x7f\x85")).toBe("a\\x00b\\x1b[2Jc\\x7f\\x85");
    expect(printable("\u202eevil\u2066\u200b")).toBe("\\u{202e}evil\\u{2066}\\u{200b}");
    expect(printable("x\u2028y\ud800z")).toBe("x\\u{2028}y\\u{d800}z");
    expect(printable("tab\there\nnew")).toBe("tab\\x09here\\x0anew");
  });

  it("caps long text and says how much was left out, counting characters not code units", () => {
    expect(printable("a".repeat(MAX_SHOWN_CHARS))).toBe("a".repeat(MAX_SHOWN_CHARS));
    expect(printable("a".repeat(5000))).toBe(`${"a".repeat(200)}…(4800 more characters)`);
    expect(printable("😀".repeat(12), 10)).toBe(`${"😀".repeat(10)}…(2 more characters)`);
  });
});
