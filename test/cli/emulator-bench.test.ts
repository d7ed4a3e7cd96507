/**
 * A bench unit against the emulator, as docs/operators.md ("A bench unit against the emulator") tells it
 * (issue 43): `vendd emulator --port N --seed FILE` as a process prints the lines a unit's config and secrets
 * need, the same after a restart; its store line names brand and location; the printed lines, pasted into a
 * config with a unit, a board and a journal, pass `vendd config validate` and the payment row of
 * `vendd doctor` against that emulator.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-emu-bench-"));
const running: ChildProcess[] = [];
afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const SEED = {
  integrators: [{ clientId: "bench-integrator", clientSecret: "bench-secret-0123456789" }],
  merchants: [
    {
      vat: "DK87654321",
      stores: [
        {
          storeId: "2f7c1a52-6a5e-4b8e-9d0c-3c1b2a4d5e6f",
          merchantBrandId: "BenchBrand",
          merchantLocationId: "Bench",
          storeName: "Bench",
        },
      ],
    },
  ],
};

/** A port free now (the emulator takes it next). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (typeof a === "object" && a !== null ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts `vendd emulator ARGS`; resolves with its summary once printed (the process keeps running). */
function emulator(args: string[]): Promise<{ proc: ChildProcess; text: string }> {
  const proc = spawn(process.execPath, [CLI, "emulator", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  return new Promise((resolve, reject) => {
    let text = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`no summary in 60 s: ${text}${err}`)), 60_000);
    proc.stdout?.on("data", (d: Buffer) => {
      text += d.toString();
      if (text.includes("Ctrl-C stops it")) {
        clearTimeout(timer);
        resolve({ proc, text });
      }
    });
    proc.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    proc.on("exit", (code) => reject(new Error(`emulator exited ${code}: ${err}`)));
  });
}

function stop(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    proc.once("exit", () => resolve());
    proc.kill("SIGTERM");
  });
}

/** The indented lines under a heading of the summary, dedented by four. */
function block(text: string, heading: string): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes(heading));
  const out: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("    ")) break;
    out.push(l.slice(4));
  }
  return `${out.join("\n")}\n`;
}

describe("a bench unit against the emulator (the documented recipe)", () => {
  it("the seeded emulator prints the same unit config lines at every start, and they work", {
    timeout: 180_000,
  }, async () => {
    const seed = join(dir, "emulator-seed.json");
    writeFileSync(seed, JSON.stringify(SEED));
    const port = await freePort();
    const args = ["--port", String(port), "--seed", seed];

    const first = await emulator(args);
    expect(first.text).toMatch(/ store \S+ {3}brand [A-Za-z0-9]{10} {3}location [A-Za-z0-9]{5}\n/);
    const config = block(first.text, "a bench unit: in /etc/vendd/config.yaml");
    const secrets = block(first.text, "and in /etc/vendd/secrets.yaml");
    expect(config).toContain(`baseUrl: http://127.0.0.1:${port}\n`);
    expect(config).toContain("clientId: bench-integrator\n");
    expect(config).toContain("storeId: 2f7c1a52-6a5e-4b8e-9d0c-3c1b2a4d5e6f\n");
    expect(secrets).toBe("v10: { clientSecret: bench-secret-0123456789 }\n");
    expect(first.text).toContain("(from the seed: the same at every start on this --port)");
    await stop(first.proc);

    const again = await emulator(args);
    expect(block(again.text, "a bench unit: in /etc/vendd/config.yaml")).toBe(config);
    expect(block(again.text, "and in /etc/vendd/secrets.yaml")).toBe(secrets);

    // Pasted into a unit's files, as the recipe says.
    const configFile = join(dir, "config.yaml");
    const secretsFile = join(dir, "secrets.yaml");
    writeFileSync(
      configFile,
      `unit: { id: bench1, name: Bench unit }\nboard: sim\njournal: { path: ${join(dir, "journal.db")} }\n${config}`,
    );
    writeFileSync(secretsFile, secrets, { mode: 0o600 });
    const valid = await vendd(["config", "validate", configFile, "--secrets", secretsFile]);
    expect(valid.code, valid.stderr).toBe(0);
    const doctor = await vendd(["doctor", "--config", configFile, "--secrets", secretsFile, "--json"]);
    const checks = (JSON.parse(doctor.stdout) as { checks: { check: string; status: string }[] }).checks;
    const payment = checks.filter((c) => c.check.startsWith("payment"));
    expect(payment.length, doctor.stdout).toBeGreaterThan(0);
    for (const c of payment) expect(c.status, doctor.stdout).toBe("ok");
    expect(doctor.stdout).toContain("issued a token for client bench-integrator");
    expect(doctor.code, doctor.stdout).toBe(0);
    await stop(again.proc);
  });

  it("without a seed it says the lines are new at each start and how to keep them", {
    timeout: 60_000,
  }, async () => {
    const e = await emulator(["--port", "0"]);
    expect(e.text).toContain("(new at each start: --seed FILE with an integrator and a store");
    await stop(e.proc);
  });
});
