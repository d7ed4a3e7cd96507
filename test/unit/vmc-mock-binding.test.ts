import type { BindingInterface } from "@serialport/bindings-cpp";
import { SerialPortMock } from "serialport";
import { afterEach, describe, expect, it } from "vitest";
import { type AdapterController, createAdapterController } from "../../drivers/vmc/adapter/index.js";
import { VmcError } from "../../drivers/vmc/controller.js";
import { VmcSimCore } from "../../drivers/vmc/simulator/index.js";
import { flushMicrotasks, ManualClock } from "../../src/core/clock.js";
import { EventLog, recordingLogger } from "../support/vmc.js";

// Byte-level tests over @serialport/binding-mock: chunking, terminators, the ACK filter, over-long lines,
// exact amounts, and timeouts driven by a ManualClock. `SerialPortMock.binding` is binding-mock's MockBinding.
const MockBinding = SerialPortMock.binding;
type MockPortBinding = Awaited<ReturnType<typeof MockBinding.open>>;

interface MockRig {
  ctrl: AdapterController;
  port: () => MockPortBinding;
  written: () => string;
  sim: VmcSimCore;
  clock: ManualClock;
  log: EventLog;
  logs: Array<{ level: number; msg: string }>;
}

function mockRig(opts: { answer?: boolean } = {}): MockRig {
  MockBinding.reset();
  MockBinding.createPort("/dev/ttyMOCK", { echo: false, record: true });
  let opened: MockPortBinding | null = null;
  const sim = new VmcSimCore();
  const binding: BindingInterface = {
    list: () => MockBinding.list(),
    async open(o) {
      const port = await MockBinding.open(o);
      opened = port;
      const write = port.write.bind(port);
      port.write = async (buf: Buffer) => {
        await write(buf);
        if (opts.answer !== false) sim.receive(buf);
      };
      sim.connect((data) => port.emitData(data));
      return port;
    },
  };
  const clock = new ManualClock();
  const { logger, lines } = recordingLogger();
  const ctrl = createAdapterController({
    path: "/dev/ttyMOCK",
    currencyCode: "EUR",
    clock,
    logger,
    binding,
    commandTimeoutMs: 500,
    linkTimeoutMs: 1000,
    readPacingMs: 0, // the ManualClock would hold paced reads until advanced
  });
  const log = new EventLog();
  ctrl.onEvent((e) => log.push(e));
  const port = () => {
    if (!opened) throw new Error("port not open");
    return opened;
  };
  return { ctrl, port, written: () => port().recording.toString("latin1"), sim, clock, log, logs: lines };
}

async function settle(): Promise<void> {
  await flushMicrotasks(10);
}

describe("vmc adapter over the mock binding", () => {
  let rig: MockRig | null = null;
  afterEach(async () => {
    await rig?.ctrl.close();
    rig = null;
  });

  it("writes the configuration as exact bytes, one \\n-terminated line each", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    expect(rig.written()).toBe("C,0\nC,SETCONF,mdb-currency-code=0x1978\nC,SETCONF,mdb-always-idle=1\nC,1\n");
    await settle();
    expect(rig.ctrl.readerState).toBe("enabled");
  });

  it("joins a line split across chunks and tolerates \\r\\n", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig.port().emitData("c,STATUS,VE");
    await settle();
    expect(rig.log.events).toEqual([]);
    rig.port().emitData("ND,15.19,17\r\n");
    await settle();
    expect(rig.log.events).toEqual([{ type: "vendRequested", item: 17, price: 1519 }]);
  });

  it("filters the r,ACK flood before parsing: many ACKs in one chunk give one link-up, no other event", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig.port().emitData("r,ACK\n".repeat(500));
    await settle();
    expect(rig.log.events).toEqual([{ type: "link", up: true }]);
    expect(rig.logs.filter((l) => l.msg === "vmc <")).toHaveLength(7); // only the 7 start-up replies were parsed
  });

  it("discards an over-long line spanning chunks, logs it, and reads the next line", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig.port().emitData(`c,STATUS,VEND,1.00,${"9".repeat(200)}`);
    rig.port().emitData(`${"9".repeat(200)}\nc,STATUS,VEND,2.50,3\n`);
    await settle();
    expect(rig.log.events).toEqual([{ type: "vendRequested", item: 3, price: 250 }]);
    expect(rig.logs.filter((l) => l.msg === "over-long line discarded")).toHaveLength(1);
  });

  it("drops amounts that are not exact (too many decimals, negative, not a number)", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig
      .port()
      .emitData("c,STATUS,VEND,1.005,2\nc,STATUS,VEND,-1.00,2\nc,STATUS,VEND,1e3,2\nc,STATUS,VEND,1.5,2\n");
    await settle();
    expect(rig.log.events).toEqual([{ type: "vendRequested", item: 2, price: 150 }]);
    expect(rig.logs.filter((l) => l.msg.startsWith("invalid line dropped"))).toHaveLength(3);
  });

  it("a command without its confirmation line rejects with VmcError timeout after commandTimeoutMs", async () => {
    rig = mockRig({ answer: false });
    const opening = rig.ctrl.open().catch((e: unknown) => e);
    await settle();
    rig.clock.advance(499);
    await settle();
    rig.clock.advance(1);
    const err = await opening;
    expect(err).toBeInstanceOf(VmcError);
    expect((err as VmcError).code).toBe("timeout");
    expect(rig.written()).toBe("C,0\n");
  });

  it("reports the link down after linkTimeoutMs without r,ACK, and up again on the next one", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig.port().emitData("r,ACK\n");
    await settle();
    rig.clock.advance(600);
    rig.port().emitData("r,ACK\n");
    await settle();
    rig.clock.advance(999);
    expect(rig.ctrl.linkUp).toBe(true);
    rig.clock.advance(1);
    expect(rig.ctrl.linkUp).toBe(false);
    rig.port().emitData("r,ACK\n");
    await settle();
    expect(rig.log.events).toEqual([
      { type: "link", up: true },
      { type: "link", up: false },
      { type: "link", up: true },
    ]);
  });

  it("approval is confirmed by the next poll, and an outcome without approval is never an event", async () => {
    rig = mockRig();
    await rig.ctrl.open();
    rig.port().emitData("c,VEND,SUCCESS\nc,ERR,VEND 3\n");
    rig.sim.vend(2, 100);
    await settle();
    expect(rig.log.types()).toEqual(["vendRequested"]);
    await rig.ctrl.approveVend(100);
    expect(rig.written().endsWith("C,VEND,1.00\n")).toBe(true);
    rig.port().emitData("c,VEND,SUCCESS\n");
    await settle();
    expect(rig.log.types()).toEqual(["vendRequested", "vendSucceeded"]);
  });
});
