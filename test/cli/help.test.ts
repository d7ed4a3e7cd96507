/**
 * The top-level help and version of the built `vendd` command (issue 10, defect 7): every option a
 * subcommand documents in its own --help, and every option of the tables the subcommands parse with,
 * appears in `vendd --help`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMMANDS, formatOption } from "../../src/cli/commands.js";
import { renderCommandUsage } from "../../src/cli/commandTable.js";
import { parseArgs as parseEmulatorArgs } from "../../src/cli/emulator.js";
import { parseArgs as parseSimDexArgs } from "../../src/cli/simDex.js";
import { parseArgs as parseSimVmcArgs } from "../../src/cli/simVmc.js";
import { vendd } from "../support/cli.js";

const flagsIn = (text: string) => new Set(text.match(/--[a-z][a-z-]*/g) ?? []);

describe("vendd --help and --version", () => {
  it("--version and -V print the package version", async () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const r = await vendd([flag]);
      expect(r).toMatchObject({ code: 0, stdout: `vendd ${version}\n`, stderr: "" });
    }
  });

  it("lists every command, and every option each subcommand's own help documents", async () => {
    const top = await vendd(["--help"]);
    expect(top.code).toBe(0);
    const names = [...new Set(COMMANDS.map((c) => c.command))];
    expect(names.sort()).toEqual([
      "bundle",
      "config",
      "console",
      "demo",
      "doctor",
      "emulator",
      "fleet",
      "journal",
      "keys",
      "nfc",
      "reconcile",
      "run",
      "screen",
      "sim-dex",
      "sim-vmc",
    ]);
    for (const name of names) {
      const own = await vendd([name, "--help"]);
      expect(own.code, `${name} --help`).toBe(0);
      const flags = [...flagsIn(own.stdout)].filter((f) => f !== "--help");
      expect(flags.length, `${name} --help documents options`).toBeGreaterThan(0);
      // The help lists a command's options on the lines after its name.
      const section = top.stdout.split(/\n {2}(?=\S)/).filter((block) => block.startsWith(name));
      for (const flag of flags) expect(section.join("\n"), `${name} ${flag}`).toContain(flag);
    }
    // The ones a new user missed.
    for (const text of [
      "nfc hash-badge UID",
      "run --config FILE [--secrets FILE]",
      "[--legacy-mode reservation|payment]",
      "[--chaos SEED]",
      "[--board sim|sim-pulse]",
      "[--vmc auto|pty|sim]",
      "doctor [--config FILE] [--secrets FILE] [--json]",
      "--version, -V",
    ]) {
      expect(top.stdout).toContain(text);
    }
  }, 60_000);

  it("shows every option of the tables the subcommands parse with", async () => {
    const top = (await vendd(["help"])).stdout;
    for (const line of COMMANDS) {
      for (const [name, spec] of Object.entries(line.options)) {
        if (name === "help" || (line.only !== undefined && !line.only.includes(name))) continue;
        expect(top, `${line.words} --${name}`).toContain(
          formatOption(name, spec, line.required?.includes(name)),
        );
      }
    }
  });

  it("fleet serve's and demo's own usage lines are the tables' synopses (issue 32: no hand-written usage)", async () => {
    for (const [args, lines] of [
      [
        ["fleet", "serve", "--help"],
        COMMANDS.filter((c) => /^fleet (serve|init|units|approve|revoke|bundle upload)\b/.test(c.words)),
      ],
      [["demo", "--help"], COMMANDS.filter((c) => c.command === "demo")],
    ] as const) {
      const r = await vendd([...args]);
      expect(r.code).toBe(0);
      for (const line of lines) {
        expect(r.stdout, line.words).toContain(`vendd ${line.words}`);
        for (const [name, spec] of Object.entries(line.options))
          if (name !== "help" && (line.only === undefined || line.only.includes(name)))
            expect(r.stdout, `${line.words} --${name}`).toContain(
              formatOption(name, spec, line.required?.includes(name)),
            );
      }
    }
  });

  it("each command's own usage lines are its tables' synopses, rendered, not written by hand (issue 35)", async () => {
    const own = [
      "run",
      "config",
      "doctor",
      "nfc",
      "console",
      "reconcile",
      "journal",
      "keys",
      "demo",
      "emulator",
      "sim-vmc",
      "sim-dex",
      "bundle",
    ];
    for (const name of own) {
      const r = await vendd([name, "--help"]);
      expect(r.code, `${name} --help`).toBe(0);
      expect(r.stdout.startsWith(renderCommandUsage(COMMANDS.filter((c) => c.command === name))), name).toBe(
        true,
      );
    }
    // `vendd fleet --help` lists every fleet line; each fleet subcommand shows its own lines.
    const fleet = COMMANDS.filter((c) => c.command === "fleet");
    expect((await vendd(["fleet", "--help"])).stdout).toBe(renderCommandUsage(fleet));
    for (const sub of ["enroll", "reconcile", "alerts", "backup", "user"]) {
      const r = await vendd(["fleet", sub, "--help"]);
      const lines = fleet.filter((c) => c.words.split(" ")[1] === sub);
      expect(r.stdout.startsWith(renderCommandUsage(lines)), `fleet ${sub}`).toBe(true);
    }
  }, 60_000);

  it("the hand-written parsers of emulator and sim-vmc take exactly their table's options", () => {
    const cases = [
      { line: COMMANDS.find((c) => c.command === "emulator"), parse: parseEmulatorArgs },
      { line: COMMANDS.find((c) => c.command === "sim-vmc"), parse: parseSimVmcArgs },
      { line: COMMANDS.find((c) => c.command === "sim-dex"), parse: parseSimDexArgs },
    ];
    for (const { line, parse } of cases) {
      if (line === undefined) throw new Error("command missing from COMMANDS");
      for (const [name, spec] of Object.entries(line.options)) {
        if (name === "help") continue;
        const argv = spec.type === "boolean" ? [`--${name}`] : [`--${name}`, "1"];
        expect(typeof parse(argv), `${line.command} --${name}`).toBe("object");
      }
      expect(typeof parse(["--no-such-option"])).toBe("string");
    }
  });
});
