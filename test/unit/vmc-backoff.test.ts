import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BindingInterface } from "@serialport/bindings-cpp";
import { SerialPortMock } from "serialport";
import { afterEach, describe, expect, it } from "vitest";
import { createAdapterController } from "../../drivers/vmc/adapter/index.js";
import { VmcSimCore } from "../../drivers/vmc/simulator/index.js";
import { flushMicrotasks, ManualClock } from "../../src/core/clock.js";
import { EventLog } from "../support/vmc.js";

// Unplug and replug with a ManualClock: the device node vanishes (a plain file stands in for it, the mock
// binding carries the bytes), reopen attempts follow a capped exponential backoff, and the reader is
// configured again once the node is back.
const MockBinding = SerialPortMock.binding;

describe("vmc adapter reopen backoff", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-vmc-backoff-"));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("retries at 100, 200, 400, 800, 800 ms, then reconfigures when the device is back", async () => {
    const node = join(dir, "ttyACM0");
    writeFileSync(node, "");
    MockBinding.reset();
    MockBinding.createPort(node, { echo: false });
    const clock = new ManualClock();
    const sim = new VmcSimCore();
    const attempts: number[] = [];
    const binding: BindingInterface = {
      list: () => MockBinding.list(),
      async open(o) {
        attempts.push(clock.now());
        if (!existsSync(node)) throw new Error(`cannot open ${node}: no such device`);
        const port = await MockBinding.open(o);
        const write = port.write.bind(port);
        port.write = async (buf: Buffer) => {
          await write(buf);
          sim.receive(buf);
        };
        sim.connect((data) => port.emitData(data));
        return port;
      },
    };
    const ctrl = createAdapterController({
      path: node,
      currencyCode: "DKK",
      clock,
      binding,
      readPacingMs: 0,
      presenceCheckMs: 50,
      reopenMinMs: 100,
      reopenMaxMs: 800,
    });
    const log = new EventLog();
    ctrl.onEvent((e) => log.push(e));
    try {
      await ctrl.open();
      expect(sim.commands).toHaveLength(4);
      rmSync(node);
      const step = async (ms: number) => {
        for (let t = 0; t < ms; t += 5) {
          clock.advance(5);
          await flushMicrotasks(3);
        }
      };
      await step(50);
      expect(log.events).toEqual([{ type: "link", up: false }]);
      const lostAt = clock.now();
      await step(100 + 200 + 400 + 800 + 800);
      expect(attempts.slice(1).map((t) => t - lostAt)).toEqual([100, 300, 700, 1500, 2300]);
      writeFileSync(node, "");
      await step(800);
      expect(attempts).toHaveLength(7);
      expect(sim.commands.slice(4)).toEqual(sim.commands.slice(0, 4));
      expect(ctrl.readerState).toBe("enabled");
    } finally {
      await ctrl.close();
    }
  });
});
