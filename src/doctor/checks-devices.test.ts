import { describe, expect, it } from "vitest";
import { createRadioAdvertiser } from "../../drivers/ble/advertiser.js";
import { createSimBeacon } from "../../drivers/ble/sim.js";
import { createNfcStation } from "../../drivers/nfc/station.js";
import { type VendController, VmcError } from "../../drivers/vmc/controller.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { ManualClock } from "../core/clock.js";
import { doctorChecks, runDoctor } from "./checks.js";
import { fakeDeps, loaded, row } from "./doctor.test-support.js";
import { allPassed, runChecks } from "./run.js";

describe("vendd doctor: devices", () => {
  it("a missing serial device fails with what to check, for a USB adapter and for the HAT", async () => {
    const deps = fakeDeps({ exists: (p) => !p.startsWith("/dev/") });
    const usb = await runDoctor(loaded({ board: "pi-usb", vmc: { device: "/dev/does-not-exist" } }), deps);
    expect(row(usb, "vmc")).toMatchObject({
      status: "fail",
      detail:
        "/dev/does-not-exist does not exist: is the USB adapter plugged in? List /dev/serial/by-id/ and set vmc.device to its link",
    });
    const hat = await runDoctor(loaded({ board: "pi-hat" }), deps);
    expect(row(hat, "vmc").detail).toMatch(
      /^\/dev\/serial0 does not exist: is the HAT seated and the serial console disabled \(console=serial0 in cmdline.txt/,
    );
    expect(allPassed(hat)).toBe(false);
  });

  it("a port in use, and an adapter that never answers (timeout, then the controller is closed)", async () => {
    const busy: VendController = Object.assign(new SimVmc({ clock: new ManualClock() }), {
      open: async () => {
        throw new VmcError("io", "Error Resource temporarily unavailable Cannot lock port");
      },
    });
    const cfg = loaded({ board: "pi-hat", vmc: { commandTimeoutMs: 1000 } });
    const inUse = await runDoctor(cfg, fakeDeps({ openVmc: async () => busy }));
    expect(row(inUse, "vmc").detail).toContain(
      "is vendd already running? Stop it first (systemctl stop vendd)",
    );

    let closed = 0;
    const silentAdapter: VendController = Object.assign(new SimVmc({ clock: new ManualClock() }), {
      open: () => new Promise<void>(() => {}),
      close: async () => {
        closed++;
      },
    });
    const deps = fakeDeps({ openVmc: async () => silentAdapter });
    const pending = runChecks(
      doctorChecks(cfg, deps).filter((c) => c.name === "vmc"),
      deps.clock,
    );
    await deps.clock.advanceAsync(6000, 500);
    const [result] = await pending;
    expect(result).toMatchObject({
      check: "vmc",
      status: "fail",
      detail: expect.stringMatching(
        /^no result within 6000 ms: no answer from \/dev\/serial0: is the HAT seated/,
      ),
    });
    expect(closed).toBeGreaterThan(0);
  });

  it("BLE adapter off and a missing PC/SC daemon fail with their hints", async () => {
    const deps = fakeDeps({
      openBeacon: async () => {
        const beacon = createSimBeacon({ clock: deps.clock });
        beacon.radio.setState("poweredOff");
        return beacon;
      },
      openNfc: async () =>
        createNfcStation({
          kind: "pcsc",
          nfc: null,
          unavailable: "module not available",
          badges: [],
          clock: deps.clock,
        }),
    });
    const pending = runDoctor(loaded(), deps);
    await deps.clock.advanceAsync(12_000, 1000);
    const results = await pending;
    expect(row(results, "ble").detail).toBe(
      "adapter powered off: power the adapter on (rfkill unblock bluetooth; bluetoothctl power on)",
    );
    expect(row(results, "nfc").detail).toBe(
      "PC/SC not available (module not available): install pcscd and nfc-pcsc (an optional dependency) and start pcscd (systemctl enable --now pcscd)",
    );
  });

  it("the nfc row says the driver's own reason, at once, when the reader cannot load", async () => {
    const reasons = [
      "module not available: libpcsclite.so.1 is missing (apt-get install pcscd libccid)",
      "module not available: pcsclite.node is built for x86-64; install the release for this board",
      "pcscd is not running (nothing listens on /run/pcscd/pcscd.comm): apt-get install pcscd libccid; systemctl enable --now pcscd.socket",
    ];
    for (const unavailable of reasons) {
      const deps = fakeDeps({
        openNfc: async () =>
          createNfcStation({ kind: "pcsc", nfc: null, unavailable, badges: [], clock: deps.clock }),
      });
      // No clock advanced: a module that cannot load, or no pcscd, does not recover while the row waits.
      const results = await runChecks(
        doctorChecks(loaded(), deps).filter((c) => c.name === "nfc"),
        deps.clock,
      );
      expect(results[0]).toMatchObject({ check: "nfc", status: "fail", detail: unavailable });
    }
  });

  it("a Bluetooth stack the kernel lacks fails at once with its own hint", async () => {
    const deps = fakeDeps({
      openBeacon: async () =>
        createRadioAdvertiser("bleno", null, "module not available: EAFNOSUPPORT", { clock: deps.clock }),
    });
    const results = await runChecks(
      doctorChecks(loaded(), deps).filter((c) => c.name === "ble"),
      deps.clock,
    );
    expect(results[0]?.detail).toBe(
      "module not available: EAFNOSUPPORT: the kernel offers no Bluetooth here (EAFNOSUPPORT): is the adapter enabled (dtoverlay, rfkill) and bluetooth loaded?",
    );
  });
});
