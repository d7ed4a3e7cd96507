/**
 * The command language of `vendd sim-dex` (interactive or `--script FILE`): vends that move the simulated
 * machine's audit counters, door events, faults and a machine-initiated push.
 */
import type { DexSimulator } from "./index.js";

export const DEX_SCRIPT_HELP = `commands (one per line, # starts a comment):
  vend SELECTION cash|card [VALUE]   the machine vends SELECTION (11, 12, 13) paid by cash or cashless
  door                               a door opening (EA1 EGS)
  fault corrupt N | corrupt-always | silent | nak | slow MS | g85-bad | none
  push                               the machine opens a session by itself and pushes its events
  role slave|master                  who sends the first ENQ
  wait MS | status | help | quit`;

export type Print = (text: string) => void;

function setFault(sim: DexSimulator, args: string[]): string | null {
  const f = sim.vmd.faults;
  const [what, n] = args;
  if (what === "corrupt" && n !== undefined && /^\d{1,4}$/.test(n)) f.corruptBlock = Number(n);
  else if (what === "corrupt-always") f.corruptAlways = true;
  else if (what === "silent") f.silent = true;
  else if (what === "nak") f.nakHandshake = true;
  else if (what === "g85-bad") f.badG85 = true;
  else if (what === "slow" && n !== undefined && /^\d{1,4}$/.test(n)) f.slowBlockMs = Number(n);
  else if (what === "none")
    Object.assign(f, {
      silent: false,
      corruptBlock: null,
      corruptAlways: false,
      nakHandshake: false,
      slowBlockMs: 0,
      badG85: false,
    });
  else return "fault: corrupt N | corrupt-always | silent | nak | slow MS | g85-bad | none";
  return null;
}

/** Runs one line; false for `quit`. Errors are printed, never thrown. */
export async function runDexScriptLine(sim: DexSimulator, raw: string, print: Print): Promise<boolean> {
  const line = raw.replace(/#.*$/, "").trim();
  if (line === "") return true;
  const [cmd = "", ...args] = line.split(/\s+/);
  try {
    switch (cmd) {
      case "vend": {
        const [sel = "", how = "", value] = args;
        if (how !== "cash" && how !== "card") throw new Error("vend SELECTION cash|card [VALUE]");
        if (value !== undefined && !/^\d{1,8}$/.test(value)) throw new Error("VALUE is whole minor units");
        sim.machine.vend(sel, how === "cash" ? "CA" : "DA", value === undefined ? undefined : Number(value));
        break;
      }
      case "door": {
        const iso = new Date().toISOString();
        sim.machine.door({
          date: iso.slice(0, 10).replace(/-/g, ""),
          time: iso.slice(11, 16).replace(":", ""),
        });
        break;
      }
      case "fault": {
        const err = setFault(sim, args);
        if (err) throw new Error(err);
        break;
      }
      case "push":
        print((await sim.vmd.push()) ? "pushed" : `push failed: ${sim.vmd.stats.lastError ?? "?"}`);
        break;
      case "role":
        if (args[0] !== "slave" && args[0] !== "master") throw new Error("role slave|master");
        sim.vmd.role = args[0];
        break;
      case "wait":
        await new Promise((r) => setTimeout(r, Math.min(Number(args[0]) || 0, 600_000)));
        break;
      case "status":
        print(JSON.stringify({ totals: sim.machine.totals(), reads: sim.machine.reads, ...sim.vmd.stats }));
        break;
      case "help":
        print(DEX_SCRIPT_HELP);
        break;
      case "quit":
        return false;
      default:
        throw new Error(`unknown command '${cmd.slice(0, 20)}' (help lists them)`);
    }
  } catch (err) {
    print(`error: ${err instanceof Error ? err.message : String(err)}`);
  }
  return true;
}
