import { MoneyFormatError, parseAmount } from "../../../src/core/money.js";
import { runDexScriptLine } from "../../dex/simulator/script.js";
import { VmcSimError } from "./core.js";
import type { VmcSimulator } from "./index.js";

/** Help text of the simulator's command language (interactive prompt and `--script` files). */
export const SCRIPT_HELP = `commands (one per line, # starts a comment):
  wait-enabled [MS]        wait until the host has switched the reader on (default 30000 ms)
  vend ITEM PRICE          the customer chooses ITEM at PRICE (e.g. vend 2 1.50)
  wait-approval [MS]       wait for the host to approve or deny (default 30000 ms)
  success [keep]           the product came out (keep: the session stays open)
  failure [keep]           the product did not come out (c,ERR,VEND 3)
  cancel                   return button
  complete                 the VMC ends an idle session
  reset | powercycle       VMC reset / adapter power-cycle
  garbage TEXT | overlong [N]
  ack-rate N               r,ACK lines per second
  wait MS                  pause the script
  status | help | quit
with --dex-port (the machine's DEX port; its audit counters follow every vend above):
  cash ITEM PRICE [KEPT]   the machine sells ITEM for cash by itself; KEPT less than PRICE: a cash shortfall
  other-card ITEM PRICE    a cashless vend through another device: DEX counts it, the unit never sees it
  uncounted [N]            the next N cashless vends are delivered but not counted in DEX (default 1)
  dex COMMAND              a sim-dex command: dex fault corrupt N|corrupt-always|silent|nak|slow MS|g85-bad|none,
                           dex push, dex door, dex role slave|master, dex status`;

/** Where the interpreter writes (stdout in the CLI, an array in tests). */
export type Print = (text: string) => void;

/**
 * Runs one command line against the simulator. Resolves `false` for `quit`, `true` otherwise; a malformed
 * command or one the state does not allow is printed, not thrown.
 */
export async function runScriptLine(
  sim: VmcSimulator,
  raw: string,
  print: Print,
  decimals = 2,
): Promise<boolean> {
  const line = raw.replace(/#.*$/, "").trim();
  if (line === "") return true;
  const [cmd = "", ...args] = line.split(/\s+/);
  const num = (i: number, fallback?: number): number => {
    const a = args[i];
    if (a === undefined && fallback !== undefined) return fallback;
    if (a === undefined || !/^\d{1,9}$/.test(a))
      throw new VmcSimError(`${cmd}: argument ${i + 1} must be an integer`);
    return Number(a);
  };
  const keep = { endSession: args[0] !== "keep" };
  try {
    switch (cmd) {
      case "vend":
        sim.vend(num(0), parseAmount(args[1] ?? "", decimals));
        break;
      case "wait-enabled":
        if (sim.reader === "off" || sim.reader === "inactive")
          await sim.waitForCommand(/^C,1$/, num(0, 30_000));
        print(`reader ${sim.reader}`);
        break;
      case "wait-approval":
        await waitApproval(sim, num(0, 30_000), print);
        break;
      case "success":
        sim.dispenseSuccess(keep);
        break;
      case "failure":
        sim.dispenseFailure(keep);
        break;
      case "cancel":
        sim.customerCancel();
        break;
      case "complete":
        sim.completeSession();
        break;
      case "reset":
        sim.vmcReset();
        break;
      case "powercycle":
        sim.adapterPowerCycle();
        break;
      case "garbage":
        sim.garbage(line.slice(cmd.length).trim());
        break;
      case "overlong":
        sim.overlongLine(num(0, 1000));
        break;
      case "ack-rate":
        sim.setAckRate(num(0));
        break;
      case "wait":
        await new Promise((r) => setTimeout(r, Math.min(num(0), 600_000)));
        break;
      case "status":
        print(
          `reader ${sim.reader}; ${sim.commands.length} host commands; approvals ${JSON.stringify(sim.approvals)}`,
        );
        break;
      case "cash":
      case "other-card":
      case "uncounted":
      case "dex":
        await dexCommand(sim, cmd, args, print, decimals);
        break;
      case "help":
        print(SCRIPT_HELP);
        break;
      case "quit":
      case "exit":
        return false;
      default:
        print(`unknown command '${cmd}' (try help)`);
    }
  } catch (err) {
    if (!(err instanceof VmcSimError || err instanceof MoneyFormatError)) throw err;
    print(`! ${err.message}`);
  }
  return true;
}

async function waitApproval(sim: VmcSimulator, timeoutMs: number, print: Print): Promise<void> {
  const line = await sim.waitForCommand(/^C,(VEND|STOP)(,|$)/, timeoutMs);
  print(line === "C,VEND,-1" || line === "C,STOP" ? "denied" : `approved (${line})`);
}

/** The commands of the machine's DEX port (`--dex-port`). */
async function dexCommand(
  sim: VmcSimulator,
  cmd: string,
  args: string[],
  print: Print,
  decimals: number,
): Promise<void> {
  const dex = sim.dex;
  if (dex === null) throw new VmcSimError(`${cmd}: the machine has no DEX port (start with --dex-port PATH)`);
  const item = (): number => {
    const a = args[0] ?? "";
    if (!/^\d{1,9}$/.test(a)) throw new VmcSimError(`${cmd}: ITEM must be an integer`);
    return Number(a);
  };
  if (cmd === "cash") {
    const price = parseAmount(args[1] ?? "", decimals);
    dex.cashVend(item(), price, args[2] === undefined ? price : parseAmount(args[2], decimals));
  } else if (cmd === "other-card") dex.otherCashlessVend(item(), parseAmount(args[1] ?? "", decimals));
  else if (cmd === "uncounted") {
    const n = args[0] ?? "1";
    if (!/^\d{1,4}$/.test(n)) throw new VmcSimError("uncounted: N must be an integer");
    dex.faults.uncounted = Number(n);
  } else await runDexScriptLine(dex.sim, args.join(" "), print);
}
