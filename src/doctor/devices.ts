/** Checks of the wired devices: the vend controller link, the display, the GPIO port. */

import { GpioError } from "../../drivers/gpio/port.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, type CheckOutcome, errnoOf, messageOf } from "./run.js";

/** Where to look when the cashless adapter does not answer, by the kind of serial device. */
export function serialHint(device: string): string {
  if (/^\/dev\/(serial[01]|ttyAMA\d+|ttyS\d+)$/.test(device)) {
    return "is the HAT seated and the serial console disabled (console=serial0 in cmdline.txt; enable_uart=1 in config.txt)?";
  }
  return "is the USB adapter plugged in? List /dev/serial/by-id/ and set vmc.device to its link";
}

const GPIO_HINT =
  "install johnny-five and the IO plugin on the device (npm install johnny-five pi-io; pi-io needs pigpio), and run as root or in the gpio group";

function gpioFailure(err: unknown): string {
  if (err instanceof GpioError && err.code === "unavailable") return `${err.message}: ${GPIO_HINT}`;
  return `${messageOf(err)}: check the gpio section and the board's pins`;
}

/** Opens the vend controller (and so its link) with a timeout, then closes it. */
export function vmcCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const vmc = config.vmc;
  const device = vmc.device ?? "(no device)";
  const pulse = config.pulse;
  const what =
    vmc.driver === "mdb-adapter"
      ? `adapter on ${device} answered`
      : vmc.driver === "pulse"
        ? `pulse output ready (pin ${String(pulse.pins.output)}, start ${String(pulse.pins.start)}, inhibit ${String(pulse.pins.inhibit)})`
        : "simulated vending machine opened";
  return {
    name: "vmc",
    timeoutMs: Math.min(30_000, 3 * vmc.commandTimeoutMs + 3000),
    timeoutHint:
      vmc.driver === "mdb-adapter"
        ? `no answer from ${device}: ${serialHint(device)}`
        : "the controller did not open",
    async run(signal) {
      if (vmc.driver === "mdb-adapter" && !deps.exists(device)) {
        return { status: "fail", detail: `${device} does not exist: ${serialHint(device)}` };
      }
      let controller: VendController | null = null;
      const close = () => controller?.close().catch(() => {});
      signal.addEventListener("abort", close, { once: true });
      try {
        controller = await deps.openVmc(config);
        await controller.open();
        return { status: "ok", detail: what };
      } catch (err) {
        return { status: "fail", detail: vmcFailure(config, err) };
      } finally {
        signal.removeEventListener("abort", close);
        await close();
      }
    },
  };
}

function vmcFailure(config: VenddConfig, err: unknown): string {
  if (config.vmc.driver === "pulse") return gpioFailure(err);
  const device = config.vmc.device ?? "(no device)";
  const code = errnoOf(err) ?? "";
  if (/lock|busy/i.test(messageOf(err)) || code === "EBUSY") {
    return `${device} is in use (${messageOf(err)}): is vendd already running? Stop it first (systemctl stop vendd)`;
  }
  if (code === "EACCES") return `no permission to open ${device}: add the vendd user to the dialout group`;
  return `no answer from ${device} (${messageOf(err)}): ${serialHint(device)}`;
}

/** The display's terminal device opens for writing (standard output when no device is configured). */
export function displayCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const d = config.display;
  return {
    name: "display",
    timeoutMs: 3000,
    timeoutHint: `opening ${d.device ?? "standard output"} blocks: is it a terminal device?`,
    async run(): Promise<CheckOutcome> {
      if (d.kind === "none") return { status: "skip", detail: "display.kind is none" };
      if (d.kind === "sim") return { status: "ok", detail: "simulated display" };
      if (d.kind === "ssd1306" || d.kind === "sh1106")
        return {
          status: "skip",
          detail: `I2C OLED on bus ${d.i2c.bus} at ${d.i2c.address}: not probed (i2cdetect -y ${d.i2c.bus}; vendd screen once running)`,
        };
      if (d.device === null) return { status: "ok", detail: "terminal on standard output" };
      try {
        deps.probeWritable(d.device);
        return { status: "ok", detail: `${d.device} writable` };
      } catch (err) {
        const code = errnoOf(err);
        if (code === "ENOENT") {
          return {
            status: "fail",
            detail: `${d.device} does not exist: is the screen connected? Check display.device (a Pi's screen is usually /dev/tty1)`,
          };
        }
        if (code === "EACCES" || code === "EPERM") {
          return {
            status: "fail",
            detail: `no permission to write ${d.device}: add the vendd user to the tty group`,
          };
        }
        return {
          status: "fail",
          detail: `cannot open ${d.device} for writing (${code ?? messageOf(err)}): check display.device`,
        };
      }
    },
  };
}

/** The GPIO port opens (johnny-five and its IO plugin load, the board reports ready), then closes. */
export function gpioCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const pins = config.gpio.pins;
  const fitted = Object.entries(pins)
    .filter(([, pin]) => pin !== null)
    .map(([name, pin]) => `${name} ${String(pin)}`);
  return {
    name: "gpio",
    timeoutMs: 12_000,
    timeoutHint: `the ${config.gpio.kind} port did not report ready: ${GPIO_HINT}`,
    async run(signal) {
      try {
        const port = await deps.openGpio(config);
        const close = () => port.close().catch(() => {});
        signal.addEventListener("abort", close, { once: true });
        try {
          await port.open();
        } finally {
          signal.removeEventListener("abort", close);
          await close();
        }
        const list = fitted.length > 0 ? fitted.join(", ") : "no panel pins";
        return { status: "ok", detail: `${config.gpio.kind} port opened (${list})` };
      } catch (err) {
        return { status: "fail", detail: gpioFailure(err) };
      }
    },
  };
}
