/**
 * A feed for the simulated reader of a unit running as its own process (tests of `vendd run`, demos): a
 * Unix socket (mode 0600) on which each line `present <uid>` presents a tag with that UID and `remove`
 * takes it away. Never used with a real reader; a bad line is logged (without its content) and ignored.
 */
import { chmodSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import type { Logger } from "pino";
import { normaliseUid } from "./badges.js";
import { type SimNfc, SimTag } from "./sim.js";
import type { NfcStation } from "./station.js";

export async function startSimFeed(
  station: NfcStation & { sim: SimNfc },
  path: string,
  logger?: Logger,
): Promise<NfcStation & { sim: SimNfc }> {
  const reader = station.sim.plug("Sim feed reader");
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let buffer = "";
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        const [verb, arg] = line.split(/\s+/);
        const uid = arg === undefined ? null : normaliseUid(arg);
        if (verb === "present" && uid !== null) reader.present(new SimTag(uid));
        else if (verb === "remove") reader.remove();
        else logger?.warn("nfc sim feed: line ignored (present <uid> | remove)");
      }
      if (buffer.length > 1000) buffer = "";
    });
  });
  rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  const close = station.close.bind(station);
  return Object.assign(station, {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(path, { force: true });
      await close();
    },
  });
}
