import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ControlConnectionError,
  ControlError,
  ControlProtocolError,
  defaultControlSocket,
  encodeError,
  encodeEvent,
  encodeOk,
  LineSplitter,
  MAX_LINE_BYTES,
  parseAnswer,
  parseRequest,
  requestIdOf,
} from "./control.js";
import { ControlClient, controlRequest } from "./controlClient.js";
import { parseControlStatus } from "./controlStatus.js";

describe("control protocol guards", () => {
  it("parses a v1 request and rejects everything else specifically", () => {
    expect(parseRequest('{"v":1,"id":3,"cmd":"status"}')).toEqual({ v: 1, id: 3, cmd: "status", args: {} });
    expect(parseRequest('{"v":1,"id":0,"cmd":"config","args":{"a":1}}').args).toEqual({ a: 1 });
    const bad = [
      "not json",
      "[1]",
      '{"v":2,"id":1,"cmd":"status"}',
      '{"v":1,"id":-1,"cmd":"status"}',
      '{"v":1,"id":1.5,"cmd":"status"}',
      '{"v":1,"id":1,"cmd":"Status!"}',
      '{"v":1,"id":1,"cmd":"status","args":[]}',
      "\u0000\u0001",
    ];
    for (const line of bad) expect(() => parseRequest(line), line).toThrow(ControlProtocolError);
    expect(() => parseRequest(`"${"x".repeat(MAX_LINE_BYTES)}"`)).toThrow(/longer than/);
    expect(requestIdOf('{"v":9,"id":7}')).toBe(7);
    expect(requestIdOf("garbage")).toBe(0);
  });

  it("parses answers and events; unknown error codes become 'error'", () => {
    expect(parseAnswer(encodeOk(1, { a: 1 }))).toEqual({ v: 1, id: 1, ok: true, result: { a: 1 } });
    expect(parseAnswer(encodeError(2, { code: "refused", message: "no", details: { errors: [] } }))).toEqual({
      v: 1,
      id: 2,
      ok: false,
      error: { code: "refused", message: "no", details: { errors: [] } },
    });
    const odd = parseAnswer('{"v":1,"id":2,"ok":false,"error":{"code":"weird","message":"m"}}');
    expect(odd).toMatchObject({ ok: false, error: { code: "error" } });
    expect(parseAnswer(encodeEvent("log", "line"))).toEqual({ v: 1, event: "log", data: "line" });
    for (const line of ['{"v":1,"id":1}', '{"v":1,"ok":true}', "x", '{"v":1,"id":1,"ok":false}'])
      expect(() => parseAnswer(line), line).toThrow(ControlProtocolError);
  });

  it("guards a status result", () => {
    const s = parseControlStatus({
      unitId: "u",
      inService: false,
      reasons: [{ code: "serviceMode", detail: "service mode", retryAt: null }],
      links: { vmc: "up", payment: "down", journal: "sideways" },
      unresolved: 0,
      configVersion: 2,
    });
    expect(s.links).toEqual({ vmc: "up", payment: "down", journal: "unknown" });
    expect(() => parseControlStatus({ inService: true })).toThrow(ControlProtocolError);
  });

  it("splits lines, drops an over-long line without buffering it", () => {
    const lines: string[] = [];
    let tooLong = 0;
    const s = new LineSplitter(
      (l) => lines.push(l),
      () => tooLong++,
      8,
    );
    s.push(Buffer.from("ab"));
    s.push(Buffer.from("c\r\n\n0123456789abcdef"));
    s.push(Buffer.from("more\nok\n"));
    expect(lines).toEqual(["abc", "ok"]);
    expect(tooLong).toBe(1);
  });

  it("default socket sits next to the journal", () => {
    expect(defaultControlSocket("/var/lib/vendd/journal.db")).toBe("/var/lib/vendd/control.sock");
  });
});

describe("control client", () => {
  let dir = "";
  let server: Server | null = null;
  afterEach(() => {
    server?.close();
    server = null;
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  function serve(handler: (line: string, write: (s: string) => void) => void): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), "vendd-control-"));
    const path = join(dir, "c.sock");
    server = createServer((sock) => {
      const split = new LineSplitter(
        (l) => handler(l, (s) => sock.write(s)),
        () => {},
      );
      sock.on("data", (c: Buffer) => split.push(c));
      sock.on("error", () => {});
    });
    return new Promise((resolve) => server?.listen(path, () => resolve(path)));
  }

  it("matches answers by id, rejects errors as ControlError and delivers events", async () => {
    const path = await serve((line, write) => {
      const r = parseRequest(line);
      if (r.cmd === "status") {
        write(encodeEvent("log", "hello"));
        write(encodeOk(r.id, { ok: 1 }));
      } else write(encodeError(r.id, { code: "unknownCommand", message: `unknown ${r.cmd}` }));
    });
    expect(await controlRequest(path, "status")).toEqual({ ok: 1 });
    const client = await ControlClient.connect(path);
    const events: unknown[] = [];
    client.onEvent((e) => events.push(e.data));
    await expect(client.request("nope")).rejects.toMatchObject({ code: "unknownCommand" });
    await expect(client.request("nope")).rejects.toBeInstanceOf(ControlError);
    expect(await client.request("status")).toEqual({ ok: 1 });
    expect(events).toEqual(["hello"]);
    client.close();
    await expect(client.request("status")).rejects.toBeInstanceOf(ControlConnectionError);
  });

  it("times out, and reports an unreachable socket", async () => {
    const path = await serve(() => {});
    await expect(controlRequest(path, "status", {}, { timeoutMs: 50 })).rejects.toMatchObject({
      code: "timeout",
    });
    await expect(controlRequest(join(dir, "none.sock"), "status")).rejects.toMatchObject({
      code: "unreachable",
    });
  });

  it("a garbage answer closes the client with a protocol error", async () => {
    const path = await serve((_l, write) => write("garbage\n"));
    await expect(controlRequest(path, "status")).rejects.toBeInstanceOf(ControlProtocolError);
  });
});
