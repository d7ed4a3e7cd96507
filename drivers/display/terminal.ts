import { closeSync, constants, createWriteStream, openSync } from "node:fs";
import { isatty } from "node:tty";
import type { Logger } from "pino";
import qrcode from "qrcode-terminal";
import type { CheckinDisplay, Screen } from "./display.js";
import { renderScreen, sameScreen } from "./render.js";

export interface TerminalDisplayOptions {
  /** Where to draw when `devicePath` is not set (default: standard output). Not closed by `close()`. */
  out?: NodeJS.WritableStream;
  /**
   * A terminal device to draw on, such as `/dev/tty1` (the board's small screen). Opened for writing
   * without O_CREAT (a missing device is an error, never a new file) and with O_NOCTTY. Takes precedence
   * over `out`. Default null.
   */
  devicePath?: string | null;
  /** Screen width in character cells (default 40). */
  width?: number;
  /** Screen height in text rows (default 20). */
  height?: number;
  /** Decimal places of the currency's minor unit (default 2). */
  decimals?: number;
  logger?: Logger;
}

/** ANSI: cursor home, then erase the whole screen. Sent only to a terminal. */
const CLEAR = "\x1b[H\x1b[2J";

/**
 * A check-in display drawn with text: the state, the amount and, for `pay` and an `idle` screen with a
 * check-in URI, the QR code (qrcode-terminal small mode: two QR modules per text row, see render.ts for
 * the sizes). Redraws only when the screen differs from the last one drawn; clears the screen first only
 * when the output is a terminal, so a pipe or a log file receives plain frames one after another.
 *
 * Failure semantics (display.ts): `show` never throws. An unopenable device, a failed write or a screen
 * that cannot be rendered is logged once (until the next successful draw) and the last screen stays.
 */
export function createTerminalDisplay(opts: TerminalDisplayOptions = {}): CheckinDisplay {
  const width = opts.width ?? 40;
  const height = opts.height ?? 20;
  const decimals = opts.decimals ?? 2;
  const log = opts.logger;
  let failing = false;
  const fail = (err: unknown, what: string) => {
    if (failing) return;
    failing = true;
    log?.error({ err }, `display: ${what}`);
  };

  const target = openTarget(opts, (err) => fail(err, `cannot open ${opts.devicePath ?? "output"}`));
  const onError = (err: unknown) => fail(err, "write failed");
  target?.stream.on("error", onError);

  let last: Screen | undefined;
  let closed = false;

  return {
    kind: "terminal",
    show(screen: Screen): void {
      if (closed || target === null || sameScreen(last, screen)) return;
      let frame: string;
      try {
        frame = `${renderScreen(screen, { width, height, decimals, qr: smallQr }).join("\n")}\n`;
      } catch (err) {
        fail(err, `cannot render the ${screen.kind} screen`);
        return;
      }
      last = screen;
      target.stream.write(target.tty ? CLEAR + frame : frame, (err) => {
        if (err) onError(err);
        else failing = false;
      });
    },
    current: () => (last === undefined ? undefined : { screen: last, bitmap: null }),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (target === null) return;
      if (target.owned) {
        await new Promise<void>((resolve) => target.stream.end(resolve));
      }
      target.stream.off("error", onError);
    },
  };
}

interface Target {
  stream: NodeJS.WritableStream;
  /** True when the output is a terminal (ANSI clear allowed). */
  tty: boolean;
  /** True when this display opened the stream and must close it. */
  owned: boolean;
}

function openTarget(opts: TerminalDisplayOptions, onFail: (err: unknown) => void): Target | null {
  const path = opts.devicePath ?? null;
  if (path === null) {
    const stream = opts.out ?? process.stdout;
    return { stream, tty: "isTTY" in stream && stream.isTTY === true, owned: false };
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NOCTTY);
  } catch (err) {
    onFail(err);
    return null;
  }
  try {
    return { stream: createWriteStream(path, { fd }), tty: isatty(fd), owned: true };
  } catch (err) {
    closeSync(fd);
    onFail(err);
    return null;
  }
}

/** qrcode-terminal's small mode (error level L, its default); calls back synchronously. */
function smallQr(text: string): string[] {
  let drawn = "";
  qrcode.generate(text, { small: true }, (s) => {
    drawn = s;
  });
  return drawn.split("\n").filter((row) => row.length > 0);
}
