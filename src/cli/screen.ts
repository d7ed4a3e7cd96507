/**
 * `vendd screen [--png FILE] [--config FILE | --socket PATH]`: what the unit's display shows now, asked of
 * the running daemon over its control socket (the public `screen` command, src/daemon/screenCommand.ts):
 * the screen as text on standard output and, with `--png`, the picture the display drew as a PNG file.
 * Exit codes: 0 shown, 1 the daemon cannot be asked or answered badly, 2 usage error.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.js";
import { defaultControlSocket } from "../core/control.js";
import { controlRequest } from "../core/controlClient.js";
import { screenAnswerSchema } from "../core/controlScreen.js";
import { printable } from "../core/printable.js";
import { renderCommandUsage } from "./commandTable.js";
import { SCREEN_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "screen"))}
Asks the running daemon what its display shows now (the last screen drawn).
--png FILE     also write the picture as a PNG (a framebuffer's or OLED's own pixels; a terminal
               display's screen drawn at 240x240)
--socket PATH  the daemon's control socket (default: console.socket, else control.sock next to the
               journal of --config FILE, default ${DEFAULT_CONFIG_FILE})
`;

export async function screenCommand(argv: string[]): Promise<number> {
  let values: { config?: string; socket?: string; png?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: SCREEN_OPTIONS }));
  } catch (err) {
    process.stderr.write(`vendd screen: ${printable((err as Error).message)}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  let socket = values.socket;
  if (socket === undefined) {
    const file = values.config ?? DEFAULT_CONFIG_FILE;
    try {
      const config = loadConfig(file, { requireSecrets: false }).config;
      socket = config.console.socket ?? defaultControlSocket(config.journal.path);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`vendd screen: invalid configuration ${printable(file)}:\n${err.message}\n`);
      return 1;
    }
  }
  let raw: unknown;
  try {
    raw = await controlRequest(socket, "screen");
  } catch (err) {
    process.stderr.write(
      `vendd screen: cannot ask the daemon at ${printable(socket)} (${printable((err as Error).message, 200)}): is vendd running (systemctl status vendd)?\n`,
    );
    return 1;
  }
  const parsed = screenAnswerSchema.safeParse(raw);
  if (!parsed.success) {
    process.stderr.write("vendd screen: the daemon's answer is not a screen (a different vendd version?)\n");
    return 1;
  }
  const a = parsed.data;
  if (a.screen === null) {
    process.stdout.write(`display ${a.display}: nothing shown yet\n`);
    return 0;
  }
  process.stdout.write(`display ${a.display}, screen ${a.screen} (${a.width}x${a.height}):\n`);
  for (const row of a.text) process.stdout.write(`${printable(row, 400)}\n`);
  if (values.png !== undefined && a.png !== null) {
    writeFileSync(values.png, Buffer.from(a.png, "base64"));
    process.stdout.write(`picture written to ${printable(values.png)}\n`);
  }
  return 0;
}
