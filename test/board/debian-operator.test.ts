/**
 * The unit's Debian package as an operator meets it (issue 43; docs/operators.md, "The Debian package"),
 * installed, upgraded, removed and purged in a scratch root (dpkg --root, maintainer scripts outside a chroot):
 * a purge never silently deletes a journal that holds unsettled sessions or events the fleet has not
 * committed (it keeps a copy and says where), and deletes a settled, delivered one; install and upgrade say
 * what to do next and whether the daemon was restarted; every unit's Documentation= names a file the package
 * ships; the man page vendd(1) lists every command of the option tables and renders without a warning.
 * The purge check runs the root's own node (the arm64 one under qemu for the arm64 package). Needs
 * `npm run release -- --arch arm64` first; skipped, saying so, outside CI when its output is missing.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { ManualClock } from "../../src/core/clock.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import {
  ARM_LIBS,
  ARM_NODE,
  debPath,
  dpkg,
  dpkgMissing,
  emptyRoot,
  hostArch,
  IN_CI,
  VERSION,
} from "../support/board.js";
import { journalSale } from "../support/journalSales.js";

const ARCH = existsSync(debPath("vendd", "arm64")) ? "arm64" : "amd64";
const DEB = debPath("vendd", ARCH);
const why =
  (existsSync(DEB) ? null : `${DEB} is missing: run \`npm run release -- --arch arm64\` first`) ??
  dpkgMissing() ??
  (ARCH === hostArch() || spawnSync("qemu-aarch64-static", ["--version"]).status === 0
    ? null
    : "qemu-aarch64-static is missing (qemu-user-static; .ci/run installs it)") ??
  (ARCH === hostArch() || existsSync(join(ARM_LIBS, "lib/ld-linux-aarch64.so.1"))
    ? null
    : `${ARM_LIBS} has no arm64 C library (g++-aarch64-linux-gnu; .ci/run installs it)`) ??
  (ARCH === hostArch() || existsSync(ARM_NODE) ? null : `${ARM_NODE} is missing: run the release first`);
if (why !== null && IN_CI) throw new Error(`debian-operator: ${why}`);
if (why !== null) console.warn(`Debian package operator tests skipped: ${why}`);

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/**
 * A scratch root with a node of the root's architecture at /usr/bin/node (what the maintainer scripts run):
 * this one, or the release's arm64 node under qemu-aarch64-static (no binfmt_misc needed).
 */
function rootWithNode(): string {
  const root = emptyRoot("vendd-deb-op-", ARCH);
  cleanup.push(root);
  const node = join(root, "usr/bin/node");
  if (ARCH === hostArch()) symlinkSync(process.execPath, node);
  else
    writeFileSync(node, `#!/bin/sh\nexec qemu-aarch64-static -L ${ARM_LIBS} ${ARM_NODE} "$@"\n`, {
      mode: 0o755,
    });
  return root;
}
const ENV = {};

/** The same package labelled `version` (an older release, for the upgrade). */
function relabel(version: string): string {
  const dir = mkdtempSync(join(tmpdir(), "vendd-deb-op-old-"));
  cleanup.push(dir);
  const tree = join(dir, "tree");
  expect(spawnSync("dpkg-deb", ["-R", DEB, tree]).status).toBe(0);
  const control = join(tree, "DEBIAN/control");
  const text = readFileSync(control, "utf8").replace(/^Version: .*$/m, `Version: ${version}`);
  writeFileSync(control, text);
  const out = join(dir, "old.deb");
  const r = spawnSync("dpkg-deb", ["--root-owner-group", "-Zxz", "--build", tree, out], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return out;
}

/** A journal at `path` with `sales` closed sales, `open` sessions left open, the outbox delivered or not. */
function writeJournal(
  path: string,
  opts: { sales: number; open: number; delivered: boolean; ids?: string },
): void {
  const clock = new ManualClock(Date.parse("2026-11-30T09:00:00Z"));
  const j = openSqliteJournal({ path, unitId: "vm1", clock, outbox: { currency: "DKK" } });
  try {
    for (let i = 0; i < opts.sales + opts.open; i++) {
      clock.advance(60_000);
      journalSale(j, {
        id: `${opts.ids ?? "s"}${i}`,
        item: 1,
        price: 1500,
        driver: "v10",
        close: i < opts.sales,
      });
    }
    if (opts.delivered) j.markDelivered(j.outboxStats().lastSeq);
  } finally {
    j.close();
  }
}

function backups(root: string): string[] {
  const dir = join(root, "var/backups/vendd");
  return existsSync(dir) ? readdirSync(dir).map((d) => join(dir, d)) : [];
}

describe.skipIf(why !== null)(`the Debian package for an operator (${ARCH})`, () => {
  it("purge keeps a copy of a journal that is owed and says where; a settled, delivered one goes", {
    timeout: 900_000,
  }, () => {
    // Unsettled sessions and events the fleet has not committed: purged in one step (prerm asks vendd).
    let root = rootWithNode();
    expect(dpkg(root, ["-i", DEB], ENV).status).toBe(0);
    const journal = join(root, "var/lib/vendd/journal.db");
    writeJournal(journal, { sales: 3, open: 2, delivered: false });
    const bytes = readFileSync(journal);
    let r = dpkg(root, ["--purge", "vendd"], ENV);
    expect(r.status, r.out).toBe(0);
    expect(existsSync(join(root, "var/lib/vendd")), r.out).toBe(false);
    let kept = backups(root);
    expect(kept, r.out).toHaveLength(1);
    const copy = kept[0] ?? "";
    expect(readFileSync(join(copy, "journal.db")).equals(bytes)).toBe(true);
    expect((statSync(join(copy, "journal.db")).mode & 0o777).toString(8)).toBe("600");
    expect((statSync(copy).mode & 0o777).toString(8)).toBe("700");
    const shown = copy.slice(root.length);
    expect(r.out).toContain(`vendd: purge kept a copy of the journal in ${shown}/`);
    expect(r.out).toContain("holds 2 unsettled sessions and 3 events the fleet has not committed");
    expect(r.out).toContain(`vendd journal unresolved --journal ${shown}/journal.db`);

    // Settled, but the fleet lacks events; removed first, purged later (the program is gone by then).
    root = rootWithNode();
    expect(dpkg(root, ["-i", DEB], ENV).status).toBe(0);
    writeJournal(join(root, "var/lib/vendd/journal.db"), { sales: 2, open: 0, delivered: false });
    expect(dpkg(root, ["--remove", "vendd"], ENV).status).toBe(0);
    r = dpkg(root, ["--purge", "vendd"], ENV);
    expect(r.status, r.out).toBe(0);
    expect(backups(root), r.out).toHaveLength(1);
    expect(r.out).toContain("holds 2 events the fleet has not committed");

    // Settled and delivered: it may go, and the purge says so.
    root = rootWithNode();
    expect(dpkg(root, ["-i", DEB], ENV).status).toBe(0);
    writeJournal(join(root, "var/lib/vendd/journal.db"), { sales: 4, open: 0, delivered: true });
    r = dpkg(root, ["--purge", "vendd"], ENV);
    expect(r.status, r.out).toBe(0);
    expect(existsSync(join(root, "var/lib/vendd"))).toBe(false);
    expect(backups(root), r.out).toEqual([]);
    expect(r.out).toContain("the journal was settled and the fleet had every event: deleted");

    // A journal changed after the check (or never checked) is kept, not trusted.
    root = rootWithNode();
    expect(dpkg(root, ["-i", DEB], ENV).status).toBe(0);
    writeJournal(join(root, "var/lib/vendd/journal.db"), { sales: 1, open: 0, delivered: true });
    expect(dpkg(root, ["--remove", "vendd"], ENV).status).toBe(0);
    writeJournal(join(root, "var/lib/vendd/journal.db"), { sales: 0, open: 1, delivered: true, ids: "t" });
    r = dpkg(root, ["--purge", "vendd"], ENV);
    expect(r.status, r.out).toBe(0);
    kept = backups(root);
    expect(kept, r.out).toHaveLength(1);
    expect(r.out).toContain("it changed after it was checked");
  });

  it("install and upgrade say what to do next; the upgrade says plainly the daemon was not restarted", {
    timeout: 120_000,
  }, () => {
    const root = rootWithNode();
    let r = dpkg(root, ["-i", relabel("0.0.1")], ENV);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain("installed; nothing is started or enabled. Next");
    expect(r.out).toContain(
      "sudo vendd config validate /etc/vendd/config.yaml --secrets /etc/vendd/secrets.yaml",
    );
    expect(r.out).toContain("sudo systemctl enable --now vendd vendd-bundle.path vendd-pull.timer");
    r = dpkg(root, ["-i", DEB], ENV);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain(`vendd: upgraded from 0.0.1 to ${VERSION}; the daemon was NOT restarted`);
    expect(r.out).toContain("'sudo systemctl restart vendd'");
    expect(r.out).toContain("Next: 'sudo vendd doctor --secrets /etc/vendd/secrets.yaml'");
  });

  it("every unit's Documentation= names a file the package ships; vendd(1) lists every command", {
    timeout: 120_000,
  }, () => {
    const root = rootWithNode();
    expect(dpkg(root, ["-i", DEB], ENV).status).toBe(0);
    const unitDir = join(root, "lib/systemd/system");
    const units = readdirSync(unitDir);
    expect(units).toContain("vendd.service");
    for (const u of units) {
      const doc = readFileSync(join(unitDir, u), "utf8").match(/^Documentation=(.*)$/m)?.[1];
      expect(doc, u).toBeDefined();
      for (const target of (doc ?? "").split(/\s+/)) {
        if (target.startsWith("file://")) {
          expect(existsSync(join(root, target.slice("file://".length))), `${u}: ${target}`).toBe(true);
        } else {
          const man = target.match(/^man:([\w-]+)\((\d)\)$/);
          expect(man, `${u}: ${target}`).not.toBeNull();
          const page = join(root, `usr/share/man/man${man?.[2]}/${man?.[1]}.${man?.[2]}.gz`);
          expect(existsSync(page), `${u}: ${target}`).toBe(true);
        }
      }
    }
    const page = join(root, "usr/share/man/man1/vendd.1.gz");
    const rendered = spawnSync("man", ["--warnings", "-l", page], {
      encoding: "utf8",
      env: { ...process.env, MANWIDTH: "200", LC_ALL: "C.UTF-8", MAN_KEEP_FORMATTING: "" },
    });
    expect(rendered.status, rendered.stderr).toBe(0);
    expect(rendered.stderr).toBe("");
    const text = rendered.stdout;
    for (const c of COMMANDS) expect(text, c.words).toContain(`vendd ${c.words}`);
    expect(text).toContain("--journal PATH");
  });
});
