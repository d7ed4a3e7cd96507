import { describe, expect, it } from "vitest";
import { censorSecretFields, createLogger, REDACT_PATHS, serializeError } from "./log.js";
import { REDACTED, SecretRegistry } from "./secrets.js";

/** A destination that records every line. */
function sink() {
  const lines: string[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(line) },
    parsed: () => lines.map((l) => JSON.parse(l)),
  };
}

describe("createLogger", () => {
  it("writes JSON lines at the level, with component children", () => {
    const out = sink();
    const log = createLogger({ level: "info", destination: out.stream, base: { unit: "vm-0001" } });
    log.child({ component: "engine" }).info({ orderId: "o-1" }, "vend started");
    log.debug("not shown");
    expect(out.parsed()).toEqual([
      expect.objectContaining({
        level: 30,
        unit: "vm-0001",
        component: "engine",
        orderId: "o-1",
        msg: "vend started",
      }),
    ]);
  });

  it("writes one component per line: the innermost, inherited by plain children", () => {
    const out = sink();
    const log = createLogger({ level: "info", destination: out.stream, base: { unit: "vm-0001" } });
    const peripherals = log.child({ component: "peripherals" });
    const gpio = peripherals.child({ component: "gpio" });
    gpio.info("pin opened");
    gpio.child({ gpioLine: 18 }).info("pin set");
    peripherals.info("started");
    log.child({ session: "s-1" }).info("no component");
    gpio.info({ component: "override" }, "call-site component");
    const keys = (line: string) => [...line.matchAll(/"([^"]+)":/g)].map((m) => m[1]);
    for (const line of out.lines) {
      const all = keys(line);
      expect(new Set(all).size, line).toBe(all.length);
    }
    expect(out.parsed().map((l) => [l.msg, l.component, l.gpioLine, l.session, l.unit])).toEqual([
      ["pin opened", "gpio", undefined, undefined, "vm-0001"],
      ["pin set", "gpio", 18, undefined, "vm-0001"],
      ["started", "peripherals", undefined, undefined, "vm-0001"],
      ["no component", undefined, undefined, "s-1", "vm-0001"],
      ["call-site component", "override", undefined, undefined, "vm-0001"],
    ]);
  });

  it("redacts secret fields at any depth, in bindings too", () => {
    const out = sink();
    const log = createLogger({ level: "info", destination: out.stream });
    log.info({
      clientSecret: "a1",
      cfg: { apiKey: "a2", legacy: { merchantKey: "a3" } },
      req: { headers: { authorization: "Bearer a4", Authorization: "Bearer a5" } },
      token: { access_token: "a6" },
      console: { session: { login: { pinHash: "scrypt$16384$8$1$salt1234" } } },
      list: [{ a: { b: { c: { d: { password: "a7" } } } } }],
    });
    log.child({ token: "a8" }).info("child");
    const line = out.lines.join("");
    for (const v of ["a1", "a2", "a3", "a4", "a5", "a6", "scrypt", "a7", "a8"])
      expect(line).not.toContain(`"${v}`);
    const [entry] = out.parsed();
    expect(entry.clientSecret).toBe(REDACTED);
    expect(entry.cfg.legacy.merchantKey).toBe(REDACTED);
    expect(entry.req.headers.authorization).toBe(REDACTED);
    expect(entry.list[0].a.b.c.d.password).toBe(REDACTED);
    expect(out.parsed()[1].token).toBe(REDACTED);
  });

  it("leaves other fields and class instances alone", () => {
    expect(censorSecretFields({ a: 1, b: [{ pinHash: 2, x: "y" }], d: new Date(0) })).toEqual({
      a: 1,
      b: [{ pinHash: REDACTED, x: "y" }],
      d: new Date(0),
    });
  });

  it("logs GPIO pin numbers and names as they are: a pin is wiring, not a secret", () => {
    const out = sink();
    const log = createLogger({ level: "info", destination: out.stream });
    log.warn({ pin: 17 }, "gpio: plugin has no pull-up; fit one");
    log
      .child({ component: "gpio" })
      .info({ pins: { statusLed: "GPIO18" }, input: { pin: "P1-11" } }, "panel");
    const [first, second] = out.parsed();
    expect(first.pin).toBe(17);
    expect(second.pins.statusLed).toBe("GPIO18");
    expect(second.input.pin).toBe("P1-11");
    expect(censorSecretFields({ b: [{ pin: 2 }] })).toEqual({ b: [{ pin: 2 }] });
  });

  it("has redaction paths for the documented secret fields", () => {
    for (const p of [
      "*.clientSecret",
      "*.apiKey",
      "*.merchantKey",
      "*.authorization",
      "*.Authorization",
      "*.token",
    ]) {
      expect(REDACT_PATHS).toContain(p);
    }
  });

  it("scrubs registered values from messages, error messages and unknown fields", () => {
    const out = sink();
    const registry = new SecretRegistry(["sk-live-123"]);
    const log = createLogger({ level: "info", destination: out.stream, secrets: registry });
    log.info({ note: "x sk-live-123 y" }, "token request with sk-live-123 failed");
    log.error(new Error("auth sk-live-123 refused"));
    registry.addSecret("eyJ.bearer.token");
    log.warn({ detail: { nested: ["Bearer eyJ.bearer.token"] } }, "retrying");
    const text = out.lines.join("");
    expect(text).not.toContain("sk-live-123");
    expect(text).not.toContain("eyJ.bearer.token");
    expect(text.split(REDACTED).length - 1).toBeGreaterThanOrEqual(4);
  });

  it("accepts a plain list of secret values", () => {
    const out = sink();
    createLogger({ level: "info", destination: out.stream, secrets: ["pl41n"] }).info("value pl41n");
    expect(out.lines.join("")).not.toContain("pl41n");
  });
});

describe("serializeError", () => {
  it("is the logger's err serializer: a logged HTTP error loses its request config", () => {
    const out = sink();
    const err = Object.assign(new Error("timeout"), { config: { url: "/v10/payments", data: "{}" } });
    createLogger({ level: "info", destination: out.stream }).error({ err }, "call failed");
    const [entry] = out.parsed();
    expect(entry.err).toEqual(expect.objectContaining({ type: "Error", message: "timeout" }));
    expect(entry.err.config).toBeUndefined();
  });

  it("drops request configs, headers and sockets, keeps type, message, code", () => {
    const err = Object.assign(new Error("request failed"), {
      code: "unavailable",
      config: { headers: { Authorization: "Bearer zz" } },
      response: { status: 500 },
      details: { headers: { authorization: "Bearer yy" }, status: 500, apiKey: "ww" },
    });
    expect(serializeError(err)).toEqual(
      expect.objectContaining({
        type: "Error",
        message: "request failed",
        code: "unavailable",
        details: { status: 500, apiKey: REDACTED },
      }),
    );
    expect(JSON.stringify(serializeError(err))).not.toMatch(/zz|yy|ww/);
  });

  it("passes non-errors through, minus request state", () => {
    expect(serializeError("plain")).toBe("plain");
    expect(serializeError({ message: "m", req: { url: "/" } })).toEqual({ message: "m" });
  });
});

describe("SecretRegistry", () => {
  it("replaces raw, JSON-escaped and percent-encoded forms, longest first", () => {
    const r = new SecretRegistry(['a"b\\c', "short", "short-and-longer", ""]);
    expect(r.scrub(JSON.stringify({ v: 'x a"b\\c y' }))).toBe(`{"v":"x ${REDACTED} y"}`);
    expect(r.scrub("client_secret=a%22b%5Cc&x=1")).toBe(`client_secret=${REDACTED}&x=1`);
    expect(r.scrub("short-and-longer short")).toBe(`${REDACTED} ${REDACTED}`);
    expect(r.scrub("nothing here")).toBe("nothing here");
  });

  it("ignores empty strings and duplicates", () => {
    const r = new SecretRegistry();
    r.addSecret("");
    expect(r.size).toBe(0);
    r.addSecret("abc");
    const size = r.size;
    r.addSecret("abc");
    expect(r.size).toBe(size);
  });
});
