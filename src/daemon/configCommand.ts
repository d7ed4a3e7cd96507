/**
 * The console's `config` command: show the running config, stage edits per connection (each checked
 * against the whole config), diff them, discard them, or apply them through the update applier's inbox.
 * Only a signed bundle changes the updates section.
 */

import { isIdentityKey } from "../config/identity.js";
import { toConfigInput } from "../config/load.js";
import { zonedTime } from "../core/days.js";
import { printable } from "../core/printable.js";
import { APPLIER_GRACE_MS, noApplierHint, waitingInInbox } from "../update/inboxWaiting.js";
import { readUpdateOutcome } from "../update/state.js";
import {
  type ConfigEdit,
  describeEdit,
  diffEdits,
  dropForApplier,
  editedText,
  identityFileIn,
  parseEdit,
  validateText,
} from "./configApply.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type ControlSession } from "./control.js";

const STAGED = "config.staged";

function staged(session: ControlSession): ConfigEdit[] {
  const s = session.data.get(STAGED);
  return Array.isArray(s) ? (s as ConfigEdit[]) : [];
}

export function configCommand(u: ConsoleUnit, a: Record<string, unknown>, session: ControlSession): unknown {
  const action = str(a, "action");
  const file = u.configFile;
  switch (action) {
    case "show": {
      const flat: { key: string; value: string }[] = [];
      flatten(toConfigInput(u.config), "", flat);
      return { version: readUpdateOutcome(u.config.updates.stateDir).highWater, entries: flat };
    }
    case "discard": {
      const n = staged(session).length;
      session.data.delete(STAGED);
      return { discarded: n };
    }
    case "diff":
      if (file === null) return { changes: [] };
      return { changes: diffEdits(file, staged(session)) };
    case "set": {
      if (file === null) throw new CommandError("refused", "this daemon runs without a config file");
      const edit = parseEdit(a.key, a.value);
      if (typeof edit === "string") throw new CommandError("badArgs", edit);
      if (edit.key === "updates" || edit.key.startsWith("updates."))
        throw new CommandError("refused", "only a signed bundle changes the updates section");
      const identity = identityFileIn(file);
      if (identity !== null && isIdentityKey(edit.key))
        throw new CommandError(
          "refused",
          `${edit.key} is this unit's identity: it is set in ${printable(identity)}, not in the config file`,
        );
      // One staged value per key: the last one typed.
      const next = [...staged(session).filter((e) => e.key !== edit.key), edit];
      const issues = validateText(editedText(file, next), u.env, file);
      if (issues.length > 0)
        throw new CommandError(
          "refused",
          `not staged, the config would be invalid:\n${issues.map((i) => `${i.path}: ${i.message}`).join("\n")}`,
          { errors: issues.map((i) => ({ path: i.path, message: i.message })) },
        );
      session.data.set(STAGED, next);
      return { staged: next.map(describeEdit) };
    }
    case "apply": {
      if (file === null) throw new CommandError("refused", "this daemon runs without a config file");
      const edits = staged(session);
      if (edits.length === 0) throw new CommandError("refused", "nothing staged (config set KEY VALUE)");
      const text = editedText(file, edits);
      const issues = validateText(text, u.env, file);
      if (issues.length > 0)
        throw new CommandError(
          "refused",
          `not applied, the config is invalid:\n${issues.map((i) => `${i.path}: ${i.message}`).join("\n")}`,
          { errors: issues },
        );
      if (edits.some((e) => e.key === "updates" || e.key.startsWith("updates.")))
        throw new CommandError("refused", "only a signed bundle changes the updates section");
      // Issue 43: a file an earlier apply left that no applier has taken means none is running: say so now.
      const inbox = u.config.updates.inbox;
      const stale = waitingInInbox(inbox).filter((f) => u.now() - f.since > APPLIER_GRACE_MS);
      const queued = dropForApplier(inbox, text, u.now());
      session.data.delete(STAGED);
      const applier =
        stale.length === 0
          ? []
          : [
              `NOT APPLIED YET: ${stale.length} earlier file(s) still wait in ${inbox}, the oldest since ${zonedTime(Math.min(...stale.map((f) => f.since)), undefined, true)};`,
              `${noApplierHint(inbox, u.configFile)}`,
            ];
      return { queued, changes: edits.map(describeEdit), applier };
    }
    default:
      throw new CommandError("badArgs", "config show|diff|set KEY VALUE|apply|discard");
  }
}

function flatten(value: unknown, prefix: string, out: { key: string; value: string }[]): void {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
    return;
  }
  out.push({
    key: prefix,
    value:
      prefix === "console.pinHash" && value !== null
        ? "(set)"
        : printable(JSON.stringify(value) ?? "null", 200),
  });
}
