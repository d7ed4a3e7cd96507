import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BOARD_NAMES, BoardError, defaultBoardsDir, loadBoard, mergeUnder } from "./boards.js";
import { issuesOf, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { buildConfig, parseConfig } from "./load.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-boards-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A boards directory holding the real profiles, with `sim` replaced by `content`. */
function boardsWithSim(content: string): string {
  const d = mkdtempSync(join(dir, "b-"));
  for (const name of BOARD_NAMES) {
    writeFileSync(join(d, `${name}.json`), JSON.stringify({ description: name }));
  }
  writeFileSync(join(d, "sim.json"), content);
  return d;
}

function boardError(fn: () => unknown): BoardError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BoardError) return err;
    throw err;
  }
  throw new Error("expected a BoardError");
}

describe("board profiles", () => {
  it("every named profile loads and validates", () => {
    expect(defaultBoardsDir()).toBe(join(import.meta.dirname, "../../boards"));
    for (const name of BOARD_NAMES) {
      const board = loadBoard(name);
      expect(board.name).toBe(name);
      expect(board.description.length).toBeGreaterThan(10);
      expect(board.values).not.toHaveProperty("description");
    }
    expect(loadBoard("pi-hat").values).toMatchObject({
      vmc: { driver: "mdb-adapter", device: "/dev/serial0" },
      display: { device: "/dev/tty1" },
      gpio: { kind: "johnny-five", io: { plugin: "pi-io" } },
    });
    expect(loadBoard("pi-usb").values).toMatchObject({
      vmc: { device: expect.stringMatching(/^\/dev\/serial\/by-id\//) },
    });
    expect(loadBoard("pi-pulse").values).toMatchObject({
      vmc: { driver: "pulse" },
      pulse: { pins: { output: "GPIO17", inhibit: "GPIO27", start: "GPIO22" } },
    });
  });

  it("refuses an unknown board name at the path board", () => {
    const err = boardError(() => loadBoard("toaster"));
    expect(err.code).toBe("unknownBoard");
    expect(err.issues).toEqual([
      {
        path: "board",
        message: "must be one of: sim, pi-hat, pi-usb, pi-pulse, sim-pulse, pi-spi-panel, pi-oled",
      },
    ]);
  });

  it("refuses a bad profile with every problem, each naming the profile and its path", () => {
    const d = boardsWithSim(
      JSON.stringify({ description: "x", vmc: { baudRate: 10, colour: "red" }, gpio: { kind: "wiringpi" } }),
    );
    const err = boardError(() => loadBoard("sim", { dir: d }));
    expect(err.code).toBe("invalid");
    expect(err.issues.map((i) => i.path)).toEqual(["board", "board", "board"]);
    const text = err.issues.map((i) => i.message).join("\n");
    expect(text).toContain(
      `profile ${join(d, "sim.json")} is invalid at vmc.baudRate: must be at least 1200`,
    );
    expect(text).toContain("at vmc.colour: unknown key");
    expect(text).toContain("at gpio.kind: must be one of: sim, johnny-five");
  });

  it("reports a profile syntax error with line and column, and a missing profile", () => {
    const d = boardsWithSim('{ "description": "x",\n  "vmc": { ');
    expect(boardError(() => loadBoard("sim", { dir: d })).issues[0]?.message).toMatch(
      /^profile sim: .*syntax error at line \d+, column \d+/,
    );
    expect(boardError(() => loadBoard("pi-hat", { dir })).code).toBe("unreadable");
  });

  it("a profile may leave the pulse price to the config but not set one that does not divide", () => {
    const d = boardsWithSim(
      JSON.stringify({
        description: "x",
        vmc: { driver: "pulse" },
        pulse: { price: "2.50", valuePerPulse: "1.00" },
      }),
    );
    expect(boardError(() => loadBoard("sim", { dir: d })).issues[0]?.message).toContain(
      "at pulse.price: must be a whole multiple of pulse.valuePerPulse",
    );
  });
});

describe("board values merged under the config", () => {
  it("mergeUnder: mappings merge, the config's scalars, nulls and lists win", () => {
    expect(
      mergeUnder({ a: { b: 1, c: [1, 2], d: "x" }, e: 5 }, { a: { b: 2, c: [3], d: null }, f: 6 }),
    ).toEqual({ a: { b: 2, c: [3], d: null }, e: 5, f: 6 });
  });

  it("the config names a board and overrides any field; defaults never mask explicit values", () => {
    const raw = { ...rawV10(), board: "pi-usb", vmc: { device: "/dev/serial/by-id/usb-mine-if00" } };
    const { config } = parseConfig(raw, undefined, V10_ENV);
    expect(config.vmc).toMatchObject({ driver: "mdb-adapter", device: "/dev/serial/by-id/usb-mine-if00" });
    expect(config.display.device).toBe("/dev/tty1");
    expect(config.ble).toMatchObject({ enabled: true, kind: "bleno" });
    const local = parseConfig(
      { ...raw, display: { device: null }, ble: { enabled: false } },
      undefined,
      V10_ENV,
    );
    expect(local.config.display.device).toBeNull();
    expect(local.config.ble.enabled).toBe(false);
  });

  it("the pulse board gives minor-unit-ready values and the config supplies the price", () => {
    expect(issuesOf({ ...rawV10(), board: "pi-pulse" })).toEqual([
      { path: "pulse.price", message: "required when vmc.driver is pulse" },
    ]);
    const { config } = parseConfig(
      { ...rawV10(), board: "pi-pulse", pulse: { price: "4.00" } },
      undefined,
      V10_ENV,
    );
    expect(config.pulse).toMatchObject({ price: "4.00", valuePerPulse: "1.00", widthMs: 50, gapMs: 100 });
    expect(config.pulse.pins.output).toBe("GPIO17");
    expect(issuesOf({ ...rawV10(), board: "pi-pulse", pulse: { price: "4.50" } })).toEqual([
      { path: "pulse.price", message: "must be a whole multiple of pulse.valuePerPulse" },
    ]);
  });

  it("errors keep the config's own paths and say when the value came from the board", () => {
    const d = boardsWithSim(JSON.stringify({ description: "x", vmc: { driver: "pulse" } }));
    const err = issuesOf({ ...rawV10(), ble: { companyId: -1 } }, undefined, V10_ENV);
    expect(err).toEqual([{ path: "ble.companyId", message: "must be at least 0" }]);
    expect(() => parseConfig(rawV10(), undefined, V10_ENV, { boardsDir: d })).toThrow(
      /pulse\.pins\.output: required when vmc\.driver is pulse\n {2}pulse\.price: required/,
    );
    const d2 = boardsWithSim(JSON.stringify({ description: "x", display: { kind: "terminal", device: "" } }));
    const refused = () =>
      buildConfig(
        {
          unit: { id: "u1", name: "U" },
          payment: {
            driver: "legacy",
            legacy: {
              baseUrl: "http://127.0.0.1:9",
              merchantId: "M",
              locationId: "L",
              posId: "p",
              posUnitId: "123456789012345",
            },
          },
        },
        { boardsDir: d2 },
      );
    expect(refused).toThrow(/profile .* is invalid at display\.device: must not be empty/);
  });

  it("marks an error whose value the board supplied", () => {
    const d = boardsWithSim(
      JSON.stringify({
        description: "x",
        vmc: { driver: "pulse" },
        pulse: { price: "3.00", pins: { output: 17 } },
      }),
    );
    const raw = { ...rawV10(), pulse: { valuePerPulse: "2.00" } };
    expect(() => parseConfig(raw, undefined, V10_ENV, { boardsDir: d })).toThrow(
      "pulse.price: must be a whole multiple of pulse.valuePerPulse (value from board sim)",
    );
  });

  it("lists a bad profile at board together with the config's own errors", () => {
    const d = boardsWithSim(JSON.stringify({ description: "x", nfc: { kind: "felica" } }));
    try {
      parseConfig({ ...rawV10(), unit: { id: "", name: "x" } }, undefined, V10_ENV, { boardsDir: d });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).toMatch(
        /board: profile .* is invalid at nfc\.kind: must be one of: pcsc, sim\n {2}unit\.id/,
      );
    }
  });

  it("badges are scrypt hashes, never raw UIDs", () => {
    const hash = `scrypt$16384$8$1$${"A".repeat(22)}$${"B".repeat(43)}`;
    const ok = parseConfig({ ...rawV10(), nfc: { badges: [{ name: "alice", hash }] } }, undefined, V10_ENV);
    expect(ok.config.nfc.badges).toEqual([{ name: "alice", hash }]);
    const bad = issuesOf({ ...rawV10(), nfc: { badges: [{ name: "bob", hash: "04a1b2c3d4e5f6" }] } });
    expect(bad).toEqual([
      { path: "nfc.badges[0].hash", message: expect.stringContaining("never a raw UID") },
    ]);
    expect(JSON.stringify(bad)).not.toContain("04a1b2c3d4e5f6");
  });
});
