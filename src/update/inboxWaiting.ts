/**
 * What waits in the update applier's inbox (issue 43): bundles dropped into `<updates.inbox>/` and configs
 * the console authorised into `<updates.inbox>/local/` (the files `vendd bundle apply --inbox` takes, in
 * its order). The applier removes each file once decided, so a file still there after a minute means no
 * applier has run: `vendd-bundle.path` is not active, or the unit is not under systemd. The console's
 * `status`, its `config apply` and `vendd bundle status` show these lines.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { zonedTime } from "../core/days.js";
import { LOCAL_INBOX } from "./apply.js";

/** How long a file may wait before "no applier has taken it" is said: the path unit starts in seconds. */
export const APPLIER_GRACE_MS = 60_000;

export interface InboxFile {
  /** Path relative to the inbox (`u.vbundle`, `local/console-….yaml`). */
  name: string;
  /** When it was put there (its mtime), epoch ms. */
  since: number;
}

function filesIn(dir: string, keep: (name: string) => boolean, prefix: string): InboxFile[] {
  if (!existsSync(dir)) return [];
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: InboxFile[] = [];
  for (const e of entries) {
    if (!e.isFile() || e.name.startsWith(".") || !keep(e.name)) continue;
    try {
      out.push({ name: `${prefix}${e.name}`, since: statSync(join(dir, e.name)).mtimeMs });
    } catch {
      // Taken by the applier between the listing and the stat.
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The files waiting for the applier, bundles first, then local configs (the applier's order). */
export function waitingInInbox(inbox: string): InboxFile[] {
  return [
    ...filesIn(inbox, () => true, ""),
    ...filesIn(
      join(inbox, LOCAL_INBOX),
      (n) => n.endsWith(".yaml") || n.endsWith(".json"),
      `${LOCAL_INBOX}/`,
    ),
  ];
}

/** The next step when no applier takes the inbox's files. */
export function noApplierHint(inbox: string, configFile: string | null): string {
  const apply = `vendd bundle apply${configFile === null ? "" : ` --config ${configFile}`} --inbox ${inbox}`;
  return `no update applier has taken it: is vendd-bundle.path active (systemctl status vendd-bundle.path)? Without systemd run, as root: ${apply}`;
}

/**
 * One line per waiting file: its name and how long it has waited; a file older than APPLIER_GRACE_MS says
 * that no applier has run and what to do. Times name their zone (src/core/days.ts zonedTime).
 */
export function waitingLines(
  inbox: string,
  files: readonly InboxFile[],
  now: number,
  configFile: string | null,
): string[] {
  return files.map((f) => {
    const age = Math.max(0, Math.floor((now - f.since) / 1000));
    const head = `waiting for the update applier: ${join(inbox, f.name)} (since ${zonedTime(f.since, undefined, true)}, ${age} s)`;
    return now - f.since > APPLIER_GRACE_MS ? `${head}; ${noApplierHint(inbox, configFile)}` : head;
  });
}
