import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rawV10 } from "../config/fixtures.test-support.js";
import { splitIdentity } from "../config/identity.js";
import { validateText } from "./configApply.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-cfgapply-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("console config edits on a unit with an identity file", () => {
  it("validates the edited config file with the identity file over it", () => {
    const { identity, rest } = splitIdentity(rawV10());
    const file = join(dir, "config.yaml");
    const text = JSON.stringify({ ...rest, engine: { maxPrice: "2.00" } });
    writeFileSync(file, text);
    // Alone the file has no unit: invalid; with the identity file next to it, valid.
    expect(validateText(text, {}, file).map((i) => i.path)).toContain("unit");
    writeFileSync(join(dir, "identity.yaml"), JSON.stringify(identity));
    expect(validateText(text, {}, file)).toEqual([]);
  });
});
