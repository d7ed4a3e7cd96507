/**
 * The contract suite against a real MDB cashless adapter (vending-mdb §2) on a real vending machine.
 * Skipped, with the reason printed, unless `VENDD_VMC_DEVICE` names the adapter.
 *
 * What a real run needs:
 * - the adapter (MDB Pi HAT on the UART, or MDB-USB; `/dev/serial/by-id/…` is best) wired to a VMC that is
 *   set up for a cashless device in "always idle" (selection first) mode, and no vendd running on it;
 * - a person at the machine: the suite prints each step to stderr ("choose a product", "take the product",
 *   "press the return button", "unplug the adapter") and waits for the VMC's lines. Products are really
 *   vended: use a test machine or the VMC's test mode, with cheap products, and funds of 50.00 accepted;
 * - environment: `VENDD_VMC_DEVICE=/dev/ttyACM0` (required), `VENDD_VMC_CURRENCY=EUR|DKK` (default EUR),
 *   `VENDD_VMC_DECIMALS` (default 2), `VENDD_VMC_HUMAN_MS` (time given for each step, default 20000),
 *   `VENDD_VMC_UNPLUG=1` to run the unplug case (a USB adapter the person can pull and put back);
 * - the command: `VENDD_VMC_DEVICE=… npx vitest run test/unit/vmc-contract/real-adapter.test.ts`.
 * Cases a real machine cannot be made to do on cue (a dispense failure, a reset mid-vend, silence, stray
 * lines, reading the display) are skipped with the reason; the simulator subjects cover them.
 */
import { existsSync } from "node:fs";
import { createAdapterController } from "../../../drivers/vmc/adapter/index.js";
import { systemClock } from "../../../src/core/clock.js";
import type { Minor } from "../../../src/core/money.js";
import type { SubjectDef } from "./subject.js";
import { describeVendController } from "./suite.js";
import { realWaits } from "./waits.js";

const env = process.env;
const device = env.VENDD_VMC_DEVICE ?? "";
const humanMs = Number(env.VENDD_VMC_HUMAN_MS ?? 20_000);
const currency = env.VENDD_VMC_CURRENCY === "DKK" ? "DKK" : "EUR";
const ON_CUE = "a real VMC cannot be made to do this on cue (the simulator subjects cover it)";

function say(text: string): void {
  process.stderr.write(`\n>>> [vendd contract, ${device}] ${text}\n`);
}

const real: SubjectDef = {
  name: `mdb-adapter driver on a real adapter (${device || "VENDD_VMC_DEVICE unset"})`,
  skip:
    device === ""
      ? "no real adapter: set VENDD_VMC_DEVICE=/dev/… to run the suite against one (see the file header)"
      : undefined,
  timeoutMs: 10 * 60_000,
  caps: {
    selection: "a person chooses any product; the suite takes the item and price the VMC reports",
    implicitSession: true,
    multiVend: "multi-vend depends on the VMC's settings",
    withdrawKeepsSession: "what a VMC does after VEND CANCEL inside a session depends on its firmware",
    dispenseFailure: ON_CUE,
    vmcReset: ON_CUE,
    strayOutcome: ON_CUE,
    display: "the machine's display is read by eye",
    silence: "a real adapter answers every command",
    unplug:
      env.VENDD_VMC_UNPLUG === "1" ? true : "set VENDD_VMC_UNPLUG=1 with a USB adapter that can be pulled",
  },
  async setup() {
    return {
      dispose: async () => undefined,
      async make() {
        const waits = realWaits(2 * 60_000);
        const ctrl = createAdapterController({
          path: device,
          currencyCode: currency,
          decimals: Number(env.VENDD_VMC_DECIMALS ?? 2),
          clock: systemClock,
        });
        let requests = 0;
        ctrl.onEvent((e) => {
          if (e.type === "vendRequested") requests++;
        });
        const ask = async (text: string) => say(text);
        const onCue = () => {
          throw new Error(ON_CUE);
        };
        return {
          ctrl,
          fixedRequest: null,
          commandTimeoutMs: 2000,
          ...waits,
          settle: () => waits.elapse(1500),
          quiet: () => waits.elapse(1500),
          teardown: () => ctrl.close(),
          machine: {
            async requestVend(_item: number, _price: Minor) {
              const before = requests;
              say(`choose any product now (if the machine does not ask for payment, that is expected here)`);
              const end = Date.now() + humanMs;
              while (requests === before && Date.now() < end) await waits.elapse(100);
              return true;
            },
            dispense: () => ask("let the machine vend: take the product"),
            withdrawRequest: () => ask("press the return (coin return / cancel) button now"),
            completeSession: () => ask("press the return button to end the session"),
            reset: onCue,
            strayOutcome: onCue,
            silence: onCue,
            async unplug() {
              say("unplug the adapter now");
              await waits.until(() => !existsSync(device), "the device node disappears");
            },
            async replug() {
              say("plug the adapter back in");
              await waits.until(() => existsSync(device), "the device node is back");
              await waits.until(() => ctrl.readerState === "enabled", "the reader is configured again");
            },
            ready: () => ctrl.readerState === "enabled" || ctrl.readerState === "idle",
            approvals: () => null,
            displays: () => null,
            violations: () => [],
          },
        };
      },
    };
  },
};

describeVendController(real);
