/**
 * The control socket part (../controlUnit.ts, unless `control: false`): the technician console's commands
 * over the unit's parts. Started last and stopped first, so no command reaches a part that has stopped.
 * A socket that cannot be served is logged and the unit runs on; another process serving this unit's
 * socket is a second daemon configured like this one: fatal.
 */

import type { VenddConfig } from "../../config/load.js";
import type { ControlServer } from "../control.js";
import { loginOf, startControl } from "../controlUnit.js";
import type { DexPart } from "./dex.js";
import type { EnginePart } from "./engine.js";
import type { FleetPart } from "./fleet.js";
import type { Part } from "./part.js";
import type { PeripheralsPart } from "./peripherals.js";

export interface ControlPart extends Part<{ serving: boolean }> {
  /** Resolves when the console asks the daemon to restart (`restart`, `config apply`). */
  readonly restartRequested: Promise<string>;
  /** The console login (PIN hash, badges) of a reloaded config (SIGHUP): the next login checks it. */
  setLogin(config: VenddConfig): void;
}

interface ControlRefs {
  engine: EnginePart;
  peripherals: PeripheralsPart;
  fleet: FleetPart;
  dex: DexPart;
}

export function controlPart({ engine, peripherals, fleet, dex }: ControlRefs): ControlPart {
  let requestRestart: (why: string) => void = () => {};
  const restartRequested = new Promise<string>((resolve) => {
    requestRestart = resolve;
  });
  let controlServer: Promise<ControlServer | null> = Promise.resolve(null);
  let serving = false;
  return {
    name: "control",
    restartRequested,
    setLogin(config) {
      const login = loginOf(config);
      void controlServer.then(
        (server) => server?.setLogin(login.pinHash, login.badges),
        () => {},
      );
    },
    start(ctx) {
      const { deps, config, state, requests, devices, clock, logger } = ctx;
      if (deps.control === false) return;
      controlServer = startControl(
        {
          config,
          configFile: deps.configFile ?? null,
          env: deps.env ?? process.env,
          journal: devices.journal,
          vmc: devices.vmc,
          now: () => clock.now(),
          status: () => state.status(),
          engine: () => engine.current,
          beacon: () => peripherals.status().beacon,
          serviceReason: () => requests.console ?? peripherals.current?.reason ?? requests.dexReason(),
          async setService(reason) {
            requests.console = reason;
            const p = peripherals.current;
            const e = engine.current;
            if (e === null) {
              state.setRequested(p?.doorOpen ?? false, reason !== null);
              return;
            }
            state.setRequested(p?.doorOpen ?? false, (p?.serviceMode ?? false) || reason !== null);
            await e.setOutOfService(reason ?? p?.reason ?? requests.dexReason());
          },
          logs: deps.logRing ?? null,
          restart: (why) => requestRestart(why),
          fleet: () => fleet.status(),
          dex: () => dex.reads,
          display: devices.display,
        },
        { clock, logger },
      );
      void controlServer.then(
        (server) => {
          serving = server !== null;
        },
        (err: unknown) => ctx.fail(err),
      );
    },
    async stop() {
      await (await controlServer.catch(() => null))?.close();
    },
    status: () => ({ serving }),
  };
}
