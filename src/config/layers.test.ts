import { describe, expect, it } from "vitest";
import { type Layer, mergeLayers } from "./layers.js";

const fleet = (values: unknown): Layer => ({ name: "fleet", source: "config.yaml", values });
const group = (name: string, values: unknown): Layer => ({ name: `group:${name}`, source: "values", values });
const unit = (values: unknown): Layer => ({ name: "unit", source: "values", values });
const identity = (values: unknown): Layer => ({ name: "identity", source: "identity.yaml", values });

describe("mergeLayers: later layers win, key by key", () => {
  it.each<[string, Layer[], unknown, Record<string, string | null>]>([
    ["one layer is itself", [fleet({ a: 1 })], { a: 1 }, { a: "fleet", b: null }],
    [
      "mappings merge key by key; the last layer setting a key owns it",
      [fleet({ engine: { maxPrice: "5.00", flow: "selection" } }), unit({ engine: { maxPrice: "2.00" } })],
      { engine: { maxPrice: "2.00", flow: "selection" } },
      { "engine.maxPrice": "unit", "engine.flow": "fleet", engine: "unit" },
    ],
    [
      "the order is fleet ← group ← unit ← identity",
      [
        fleet({ unit: { id: "vm-a" }, x: 1, y: 1, z: 1 }),
        group("north", { x: 2, y: 2, z: 2 }),
        unit({ y: 3, z: 3 }),
        identity({ unit: { id: "vm-b" }, z: 4 }),
      ],
      { unit: { id: "vm-b" }, x: 2, y: 3, z: 4 },
      { "unit.id": "identity", x: "group:north", y: "unit", z: "identity" },
    ],
    [
      "two groups: the one listed later wins",
      [fleet({}), group("a", { x: 1, y: 1 }), group("b", { x: 2 })],
      { x: 2, y: 1 },
      { x: "group:b", y: "group:a" },
    ],
    [
      "a list replaces the list below it whole; its items belong to its layer",
      [fleet({ l: [1, 2, 3] }), unit({ l: [9] })],
      { l: [9] },
      { l: "unit", "l[0]": "unit" },
    ],
    [
      "null replaces a mapping; paths under it belong to the layer that set null",
      [fleet({ entitlements: { publicKey: "k" } }), unit({ entitlements: null })],
      { entitlements: null },
      { "entitlements.publicKey": "unit" },
    ],
    [
      "a mapping set by a later layer does not claim the keys it leaves alone",
      [fleet({ journal: { retentionDays: 30 } }), identity({ journal: { path: "/j.db" } })],
      { journal: { retentionDays: 30, path: "/j.db" } },
      { "journal.retentionDays": "fleet", "journal.path": "identity", "journal.sizeLimitBytes": null },
    ],
    [
      "an absent layer value keeps what is below",
      [fleet({ a: { b: 1 } }), unit(undefined), identity({})],
      { a: { b: 1 } },
      { "a.b": "fleet" },
    ],
  ])("%s", (_, layers, raw, origins) => {
    const before = JSON.stringify(layers);
    const merged = mergeLayers(layers);
    expect(merged.raw).toEqual(raw);
    for (const [path, name] of Object.entries(origins))
      expect(merged.originOf(path)?.name ?? null, path).toBe(name);
    // Pure: the inputs are left as they were.
    expect(JSON.stringify(layers)).toBe(before);
  });
});
