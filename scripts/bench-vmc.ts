/**
 * CPU cost of the adapter driver under the `r,ACK` flood (vending-mdb §2.5): the adapter sends 1,000
 * `r,ACK` lines per second for about 5 s and `process.cpuUsage` measures this process, which holds only the
 * driver. The adapter simulator runs in a child process on a real PTY (socat) when the built simulator and
 * socat are present; otherwise over the mock binding in this process (then the figure includes the feeder).
 * Target: < 2 % of one core.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BindingInterface } from "@serialport/bindings-cpp";
import { createAdapterController } from "../drivers/vmc/adapter/index.js";
import { socatAvailable, VmcSimCore } from "../drivers/vmc/simulator/index.js";
import { systemClock } from "../src/core/clock.js";

const RATE = 1000;
const MEASURE_MS = 5000;
const WARMUP_MS = 500;

const CHILD_SRC = `
const [simUrl, linkPath, rate] = process.argv.slice(1);
const { startVmcSimulator } = await import(simUrl);
const sim = await startVmcSimulator({ linkPath, ackRate: Number(rate) });
process.stdout.write("READY\\n");
process.stdin.resume();
process.stdin.on("end", async () => { await sim.close(); process.exit(0); });
`;

interface Feeder {
  mode: string;
  path: string;
  binding?: BindingInterface;
  stop(): Promise<void>;
}

async function ptyChildFeeder(simJs: string, dir: string): Promise<Feeder> {
  const path = join(dir, "ttyBENCH");
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", CHILD_SRC, pathToFileURL(simJs).href, path, String(RATE)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("simulator child did not start within 10 s")), 10_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (t: string) => {
      if (t.includes("READY")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`simulator child exited (${code})`)));
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    mode: "pty, simulator in a child process",
    path,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

async function mockFeeder(): Promise<Feeder> {
  const MockBinding = (await import("serialport")).SerialPortMock.binding;
  MockBinding.reset();
  MockBinding.createPort("/dev/ttyBENCH", { echo: false });
  const sim = new VmcSimCore();
  let timer: ReturnType<typeof setInterval> | null = null;
  const binding: BindingInterface = {
    list: () => MockBinding.list(),
    async open(o) {
      const port = await MockBinding.open(o);
      const write = port.write.bind(port);
      port.write = async (buf: Buffer) => {
        await write(buf);
        sim.receive(buf);
      };
      sim.connect((data) => port.emitData(data));
      const batch = "r,ACK\n".repeat(RATE / 100);
      timer = setInterval(() => port.emitData(batch), 10);
      return port;
    },
  };
  return {
    mode: "mock binding, feeder in this process",
    path: "/dev/ttyBENCH",
    binding,
    async stop() {
      if (timer) clearInterval(timer);
    },
  };
}

/** Runs the benchmark and returns its figures (CPU in percent of one core). */
export async function benchVmc(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), "vendd-bench-vmc-"));
  const simJs = fileURLToPath(new URL("../drivers/vmc/simulator/index.js", import.meta.url));
  const feeder =
    socatAvailable() && existsSync(simJs) ? await ptyChildFeeder(simJs, dir) : await mockFeeder();
  let links = 0;
  const ctrl = createAdapterController({
    path: feeder.path,
    currencyCode: "DKK",
    clock: systemClock,
    binding: feeder.binding,
    linkTimeoutMs: 1000,
  });
  ctrl.onEvent((e) => {
    if (e.type === "link") links++;
  });
  try {
    await ctrl.open();
    await systemClock.sleep(WARMUP_MS);
    const acks0 = ctrl.acksReceived;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await systemClock.sleep(MEASURE_MS);
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const acks = ctrl.acksReceived - acks0;
    return {
      mode: feeder.mode,
      ackPerSecondSent: RATE,
      ackPerSecondReceived: Math.round((acks * 1000) / wallMs),
      seconds: Math.round(wallMs) / 1000,
      cpuUserMs: Math.round(cpu.user / 1000),
      cpuSystemMs: Math.round(cpu.system / 1000),
      cpuPercentOfOneCore: Math.round((cpuMs / wallMs) * 10_000) / 100,
      targetPercent: 2,
      linkEvents: links,
      linkUp: String(ctrl.linkUp),
    };
  } finally {
    await ctrl.close();
    await feeder.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchVmc().then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (err: unknown) => {
      process.stderr.write(`bench-vmc: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
