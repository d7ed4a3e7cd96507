/**
 * The control socket's path before the daemon listens on it: a socket left by a dead daemon is removed, one
 * another process still answers on is refused (ControlSocketInUse), and anything else is never replaced.
 */
import { lstatSync, unlinkSync } from "node:fs";
import { connect } from "node:net";

/** Another process listens on the control socket's path: the daemon refuses to start. */
export class ControlSocketInUse extends Error {
  override readonly name = "ControlSocketInUse";
}

/** Clears `path` for a new listener, or throws why it must not be. */
export async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket: refusing to replace it`);
  if (await answers(path))
    throw new ControlSocketInUse(
      `control socket ${path} is in use by another process (a second daemon with the same console.socket?); stop it, or set console.socket in the config to another path`,
    );
  unlinkSync(path);
}

/** Whether a process listens on the socket at `path` (a stale one refuses the connection). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    const done = (live: boolean) => {
      probe.destroy();
      resolve(live);
    };
    probe.once("connect", () => done(true));
    probe.once("error", () => done(false));
    probe.setTimeout(1000, () => done(false));
  });
}
