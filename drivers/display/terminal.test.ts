import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import qrcode from "qrcode-terminal";
import { describe, expect, it } from "vitest";
import { checkinUri, type Screen } from "./display.js";
import { createTerminalDisplay } from "./terminal.js";

/** A writable that records each chunk; `isTTY` makes it look like a terminal. */
function recorder(isTTY = false): Writable & { chunks: string[]; isTTY: boolean } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString("utf8"));
      cb();
    },
  });
  return Object.assign(w, { chunks, isTTY });
}

function captureLogger() {
  const lines = recorder();
  return { logger: pino({ level: "error" }, lines), lines: lines.chunks };
}

const guidUri = checkinUri("servicepos", "CD851CD7-8398-4A03-83C1-391A2F5CB71C");
const digitsUri = checkinUri("servicepos", "123456789012345");
const pay = (uri: string): Screen => ({
  kind: "pay",
  amount: 1250,
  currency: "DKK",
  checkinUri: uri,
  item: 7,
});

describe("createTerminalDisplay", () => {
  it("draws the pay screen with the QR code of the lowercase check-in URI (pos-v10 §15)", () => {
    const out = recorder();
    createTerminalDisplay({ out }).show(pay(guidUri));
    expect(out.chunks).toHaveLength(1);
    let expected = "";
    qrcode.generate(
      "servicepos://pos?id=cd851cd7-8398-4a03-83c1-391a2f5cb71c&source=qr",
      { small: true },
      (s) => {
        expected = s;
      },
    );
    expect(out.chunks[0]).toBe(`Pay 12.50 DKK (item 7)\n${expected}Scan with the app to pay\n`);
    const digits = recorder();
    createTerminalDisplay({ out: digits }).show(pay(digitsUri));
    expect(digits.chunks[0]).toMatchSnapshot();
  });

  it("fits the pay screen for a 15-digit and a GUID beaconId into 40x20", () => {
    for (const [uri, qrRows, qrCols] of [
      [digitsUri, 16, 31],
      [guidUri, 18, 35],
    ] as const) {
      const out = recorder();
      createTerminalDisplay({ out }).show(pay(uri));
      const rows = (out.chunks[0] ?? "").trimEnd().split("\n");
      expect(rows.length).toBe(qrRows + 2);
      expect(rows.length).toBeLessThanOrEqual(20);
      expect(Math.max(...rows.map((r) => [...r].length))).toBe(qrCols);
      expect(rows[0]).toBe("Pay 12.50 DKK (item 7)");
    }
  });

  it("redraws only when the screen changes (deep equality)", () => {
    const out = recorder();
    const d = createTerminalDisplay({ out });
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    expect(out.chunks).toHaveLength(1);
    d.show({ kind: "vending", amount: 200, currency: "DKK" });
    d.show({ kind: "thankYou", amount: 200, currency: "DKK" });
    d.show({ kind: "thankYou", amount: 200, currency: "DKK" });
    expect(out.chunks).toHaveLength(3);
  });

  it("clears the screen with ANSI only on a terminal", () => {
    const tty = recorder(true);
    const pipe = recorder(false);
    const screen: Screen = { kind: "cancelled", reason: "timeout" };
    createTerminalDisplay({ out: tty }).show(screen);
    createTerminalDisplay({ out: pipe }).show(screen);
    expect(tty.chunks[0]).toBe("\x1b[H\x1b[2JPayment cancelled\ntimeout\n");
    expect(pipe.chunks[0]).toBe("Payment cancelled\ntimeout\n");
  });

  it("writes to a device path (a regular file is not a terminal: no ANSI) and closes it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "vendd-display-")), "screen");
    writeFileSync(path, "");
    const d = createTerminalDisplay({ devicePath: path, out: recorder() });
    d.show({ kind: "outOfService", reason: "door open" });
    await d.close();
    expect(readFileSync(path, "utf8")).toBe("Out of service\ndoor open\n");
    d.show({ kind: "idle", checkinUri: null, message: "after close" });
    expect(readFileSync(path, "utf8")).not.toContain("after close");
  });

  it("never throws for a missing device, logs once and creates no file", async () => {
    const { logger, lines } = captureLogger();
    const path = join(mkdtempSync(join(tmpdir(), "vendd-display-")), "no-such-tty");
    const d = createTerminalDisplay({ devicePath: path, logger });
    expect(() => d.show(pay(digitsUri))).not.toThrow();
    d.show({ kind: "vending", amount: 1, currency: "DKK" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("cannot open");
    expect(() => readFileSync(path)).toThrow();
    await d.close();
  });

  it("keeps the last screen when a screen cannot be rendered, and logs it once", () => {
    const { logger, lines } = captureLogger();
    const out = recorder();
    const d = createTerminalDisplay({ out, logger });
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    d.show({ kind: "vending", amount: -5, currency: "DKK" });
    d.show({ kind: "vending", amount: 1.5, currency: "DKK" });
    expect(lines).toHaveLength(1);
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    expect(out.chunks).toHaveLength(1);
  });

  it("survives a failing output stream", async () => {
    const { logger, lines } = captureLogger();
    const out = new Writable({
      write(_c, _e, cb) {
        cb(new Error("EIO"));
      },
    });
    const d = createTerminalDisplay({ out, logger });
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    await new Promise<void>((r) => setImmediate(r));
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain("write failed");
    await d.close();
  });
});
