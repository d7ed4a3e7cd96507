/**
 * The dashboard's tests through Fastify's inject (fleet-dashboard*.test.ts): logging in (a session cookie and
 * its CSRF token), posting forms, and a seeded fleet (fleetDashboard.ts) shared by a file's tests, with a
 * manager and a viewer logged in.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect } from "vitest";
import { SESSION_COOKIE } from "../../src/fleet/web/index.js";
import { type Fleet, MANAGER, startFleet, VIEWER } from "./fleetDashboard.js";

export const HOST = "fleet.test";
export const ORIGIN = `http://${HOST}`;

export interface Login {
  cookie: string;
  token: string;
  csrf: string;
}

export function cookieOf(setCookie: string | string[] | undefined): string {
  const line = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (line === undefined) throw new Error("no set-cookie");
  return line;
}

export async function loginAs(
  app: FastifyInstance,
  user: { username: string; password: string },
  remote = "10.0.0.1",
): Promise<Login> {
  const r = await app.inject({
    method: "POST",
    url: "/login",
    remoteAddress: remote,
    headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams(user).toString(),
  });
  expect(r.statusCode, r.body).toBe(303);
  const line = cookieOf(r.headers["set-cookie"]);
  const token = /vendd_session=([^;]+)/.exec(line)?.[1] ?? "";
  const cookie = `${SESSION_COOKIE}=${token}`;
  const page = await app.inject({ method: "GET", url: "/units", headers: { host: HOST, cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  expect(csrf.length).toBeGreaterThan(20);
  return { cookie, token, csrf };
}

export function post(
  app: FastifyInstance,
  url: string,
  login: Login | null,
  form: Record<string, string>,
  headers: Record<string, string> = { origin: ORIGIN },
) {
  return app.inject({
    method: "POST",
    url,
    headers: {
      host: HOST,
      ...(login === null ? {} : { cookie: login.cookie }),
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    payload: new URLSearchParams(form).toString(),
  });
}

export async function unitStatus(fleet: Fleet, id: string): Promise<string | undefined> {
  const row = await fleet.ctx.db.selectFrom("units").select("status").where("id", "=", id).executeTakeFirst();
  return row?.status;
}

/**
 * For one describe: a seeded fleet started before its tests, with the manager and the viewer logged in, and
 * closed after them; `bind` is handed them (for the test file's own variables). The tests share its state.
 */
export function sharedFleet(bind: (shared: { fleet: Fleet; manager: Login; viewer: Login }) => void): void {
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    fleet = await startFleet();
    const manager = await loginAs(fleet.app, MANAGER);
    const viewer = await loginAs(fleet.app, VIEWER);
    bind({ fleet, manager, viewer });
  });
  afterAll(async () => {
    await fleet?.close();
  });
}
