/**
 * Board profiles are data (style anchors, habit 3): `boards/<name>.json` says which driver kind each seam
 * uses and its device paths and pins, in the shape of the config's own sections. A config names a board
 * and may override any field: the profile is merged UNDER the raw config before the schema parses it
 * (merge.ts), so schema defaults never mask an explicit value and errors keep the config's own paths.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod";
import { readStructuredFile } from "./files.js";
import { type ConfigIssue, describeIssue, toConfigIssues } from "./issues.js";
import { isRecord } from "./rules.js";
import { BOARD_NAMES, type BoardName, displaySchema, vmcSchema } from "./schema.js";
import { bleSchema, gpioSchema, nfcSchema, pulseIssues, pulseSchema } from "./schema-devices.js";

export { annotateIssues, mergeUnder } from "./boards-merge.js";
export { BOARD_NAMES, type BoardName } from "./schema.js";

/**
 * A profile file: a description plus the config sections a board may set (vmc, display, ble, nfc, gpio,
 * pulse), each checked by the config's own section schema; unknown keys are errors, like in the config.
 */
export const boardSchema = z
  .strictObject({
    description: z.string().min(1, "must not be empty").max(400, "must be at most 400 characters long"),
    vmc: vmcSchema.optional(),
    display: displaySchema.optional(),
    ble: bleSchema.optional(),
    nfc: nfcSchema.optional(),
    gpio: gpioSchema.optional(),
    pulse: pulseSchema.optional(),
  })
  .superRefine((value, ctx) => {
    for (const issue of pulseIssues(value.vmc?.driver, value.pulse)) {
      // A profile may leave the price to the config; only a price that does not divide is its own error.
      if (issue.message.startsWith("required")) continue;
      ctx.addIssue({ code: "custom", path: issue.path, message: issue.message, input: undefined });
    }
  });

/** A loaded, valid profile. */
export interface BoardProfile {
  name: BoardName;
  description: string;
  /** The profile's config sections exactly as written (no defaults filled in), for merging. */
  values: Record<string, unknown>;
  /** The file it came from. */
  file: string;
}

export type BoardErrorCode = "unknownBoard" | "unreadable" | "invalid";

/** A profile that cannot be used; `issues` are at the config path `board`, each naming the profile path. */
export class BoardError extends Error {
  override readonly name = "BoardError";
  constructor(
    readonly code: BoardErrorCode,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join("\n"));
  }
}

export interface BoardLoadOptions {
  /** Directory of the profile files; default `defaultBoardsDir()`. */
  dir?: string;
}

/**
 * The directory holding the profiles: the package's top-level `boards/` (data only), two levels up from
 * this module in the source tree (`src/config/`) and three from the built one (`dist/src/config/`; tsc
 * does not copy JSON, package.json ships `boards`).
 */
export function defaultBoardsDir(): string {
  const here = import.meta.dirname;
  const candidates = [resolve(here, "../../boards"), resolve(here, "../../../boards")];
  for (const candidate of candidates) {
    if (existsSync(join(candidate, "sim.json"))) return candidate;
  }
  return candidates[0] ?? here;
}

function isBoardName(name: unknown): name is BoardName {
  return BOARD_NAMES.some((n) => n === name);
}

/**
 * Reads and validates `boards/<name>.json`.
 * @throws BoardError `unknownBoard` for a name outside `BOARD_NAMES`, `unreadable` for a missing file or a
 *   syntax error, `invalid` with every schema issue (paths inside the profile, e.g. `vmc.baudRate`).
 */
export function loadBoard(name: string, opts: BoardLoadOptions = {}): BoardProfile {
  if (!isBoardName(name)) {
    throw new BoardError("unknownBoard", [
      { path: "board", message: `must be one of: ${BOARD_NAMES.join(", ")}` },
    ]);
  }
  const file = join(opts.dir ?? defaultBoardsDir(), `${name}.json`);
  const read = readStructuredFile(file, { label: "board" });
  if (!read.ok) {
    throw new BoardError(
      "unreadable",
      read.issues.map((i) => ({ path: "board", message: `profile ${name}: ${i.message}` })),
    );
  }
  const parsed = boardSchema.safeParse(read.value, { error: describeIssue });
  if (!parsed.success) {
    const issues = toConfigIssues(parsed.error.issues, "", false).map((i) => ({
      path: "board",
      message: `profile ${file} is invalid at ${i.path}: ${i.message}`,
    }));
    throw new BoardError("invalid", issues);
  }
  const values = isRecord(read.value) ? { ...read.value } : {};
  delete values.description;
  return { name, description: parsed.data.description, values, file };
}

/** The board a raw config names (`sim` when it names none), or null when the name is not a board. */
export function boardNameOf(raw: unknown): BoardName | null {
  const name = isRecord(raw) && raw.board !== undefined ? raw.board : "sim";
  return isBoardName(name) ? name : null;
}
