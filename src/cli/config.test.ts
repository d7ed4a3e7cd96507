import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { rawV10 } from "../config/fixtures.test-support.js";
import { parseConfig } from "../config/load.js";
import type { CliIo } from "./command.js";
import { configCommand } from "./config.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, value: unknown, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : stringify(value));
  chmodSync(path, mode);
  return path;
}

/** Runs the command with captured output. */
async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  };
  const code = await configCommand(argv, io);
  return { code, stdout, stderr };
}

const good = write("good.yaml", rawV10());
const secrets = write("secrets.yaml", { v10: { clientSecret: "cli-secret-value" } });

describe("vendd config validate", () => {
  it("prints ok and exits 0 for a valid file", async () => {
    expect(await run(["validate", good, "--secrets", secrets])).toEqual({
      code: 0,
      stdout: `ok: ${good}\n`,
      stderr: "",
    });
  });

  it("prints warnings after ok", async () => {
    const loose = write("loose.yaml", { v10: { clientSecret: "x" } }, 0o640);
    const r = await run(["validate", good, "--secrets", loose]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: secrets file .* has mode 0640/);
  });

  it("lists every error by path on stderr and exits 1", async () => {
    const bad = write("bad.yaml", {
      ...rawV10(),
      board: "toaster",
      unit: { id: "", name: "Vending 1", colour: "red" },
      engine: { sessionMax: "1.005" },
    });
    const r = await run(["validate", bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(`${bad}: 5 errors`);
    expect(lines.slice(1).map((l) => l.replace(/:.*/, ""))).toEqual([
      "  unit.id",
      "  unit.colour",
      "  board",
      "  engine.sessionMax",
      "  secrets.v10.clientSecret",
    ]);
  });

  it("takes the secret from the environment", async () => {
    expect((await run(["validate", good], { VENDD_V10_CLIENT_SECRET: "e" })).code).toBe(0);
  });

  it("returns 2 on usage errors", async () => {
    for (const argv of [
      [],
      ["validate"],
      ["frobnicate", good],
      ["validate", good, "extra"],
      ["validate", good, "--nope"],
    ]) {
      const r = await run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("usage: vendd config validate FILE");
    }
    expect((await run(["--help"])).code).toBe(0);
  });

  it("does not echo a mistyped option's value", async () => {
    const r = await run(["validate", good, "--client-secret=canary-cli-flag"]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("canary-cli-flag");
  });
});

describe("vendd config print", () => {
  it("prints the effective config with defaults as YAML that validates again, without secrets", async () => {
    const r = await run(["print", good, "--secrets", secrets]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("cli-secret-value");
    const printed: unknown = parse(r.stdout);
    expect(printed).toMatchObject({
      board: "sim",
      journal: { retentionDays: 90 },
      engine: { sessionMax: "20.00" },
    });
    expect(parseConfig(printed, undefined, { VENDD_V10_CLIENT_SECRET: "x" }).config.unit.id).toBe("vm-0001");
  });

  it("prints JSON with --json", async () => {
    const r = await run(["print", good, "--json"], { VENDD_V10_CLIENT_SECRET: "x" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ payment: { driver: "v10", v10: { retries: { max: 2 } } } });
  });

  it("refuses an invalid config like validate", async () => {
    const r = await run(["print", write("bad2.yaml", { unit: { id: "x" } })]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("  unit.name: required");
  });
});
