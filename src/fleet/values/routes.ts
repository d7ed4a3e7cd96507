/**
 * The values pages and their forms (issue 41): `/groups/:name` (a group's units and values; managers edit
 * both), `/units/:id/values` (a unit's own values and its groups'), the forms that set and unset values, and
 * the JSON under `/api/v1/values` (read by every role; set and unset by managers, with the CSRF token in
 * `x-csrf-token` as every dashboard POST). A refused change names what and why and changes nothing.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { FleetContext } from "../context.js";
import {
  addToGroup,
  groupNameProblem,
  groupNamesOfUnit,
  listGroups,
  removeFromGroup,
  unknownUnits,
} from "../groups/index.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { deleteFleetGroup, renameFleetGroup, setFleetValue, unsetFleetValue } from "./actions.js";
import { ValueRefused, type ValueScope } from "./rules.js";
import { listValues } from "./store.js";
import { groupHref, groupPage, unitValuesPage } from "./views.js";

/** A form or JSON field as trimmed text ("" when absent). */
function field(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null) return "";
  const v = (body as Record<string, unknown>)[name];
  return typeof v === "string" ? v.trim() : "";
}

function scopeOf(body: unknown): ValueScope | null {
  const s = field(body, "scope");
  return s === "unit" || s === "group" ? s : null;
}

const unitsOf = (body: unknown) =>
  field(body, "units")
    .split(/[\s,]+/)
    .filter((u) => u !== "");

const backTo = (scope: ValueScope, target: string) =>
  scope === "group" ? groupHref(target) : `/units/${encodeURIComponent(target)}/values`;

export function mountValuePages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  const { sendHtml, pageContext: pc } = t;
  const by = (req: Parameters<DashboardTools["session"]>[0]) => t.session(req).username;
  /** Runs a manager's change; a refusal is a 400 page naming it. */
  const change = async (reply: FastifyReply, act: () => Promise<string>): Promise<FastifyReply> => {
    try {
      return reply.redirect(await act(), 303);
    } catch (e) {
      if (e instanceof ValueRefused) return sendHtml(reply, messagePage("Refused", e.message), 400);
      throw e;
    }
  };

  web.get<{ Params: { name: string } }>("/groups/:name", async (req, reply) => {
    const group = (await listGroups(ctx.db)).find((g) => g.name === req.params.name);
    if (group === undefined) return sendHtml(reply, messagePage("Not found", "No such group."), 404);
    const values = await listValues(ctx.db, { scope: "group", target: group.name });
    return sendHtml(reply, groupPage(pc(req), group.name, group.units, values));
  });
  web.get<{ Params: { id: string } }>("/units/:id/values", async (req, reply) => {
    const id = req.params.id;
    if ((await unknownUnits(ctx.db, [id])).length > 0)
      return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
    const groups = [];
    for (const name of await groupNamesOfUnit(ctx.db, id))
      groups.push({ name, values: await listValues(ctx.db, { scope: "group", target: name }) });
    const own = await listValues(ctx.db, { scope: "unit", target: id });
    return sendHtml(reply, unitValuesPage(pc(req), id, groups, own));
  });

  // A group made from the groups page: a name and its first units.
  web.post("/groups", { preHandler: t.managerOnly }, (req, reply) =>
    change(reply, async () => {
      const name = field(req.body, "name");
      await addUnits(ctx, name, unitsOf(req.body));
      return groupHref(name);
    }),
  );
  web.post<{ Params: { name: string } }>("/groups/:name/add", { preHandler: t.managerOnly }, (req, reply) =>
    change(reply, async () => {
      await addUnits(ctx, req.params.name, unitsOf(req.body));
      return groupHref(req.params.name);
    }),
  );
  web.post<{ Params: { name: string } }>(
    "/groups/:name/remove",
    { preHandler: t.managerOnly },
    (req, reply) =>
      change(reply, async () => {
        const left = (await listGroups(ctx.db)).find((g) => g.name === req.params.name)?.units ?? [];
        await removeFromGroup(ctx.db, req.params.name, unitsOf(req.body));
        // The last unit out: the group is gone, and with it its values.
        if (left.every((u) => unitsOf(req.body).includes(u))) {
          await deleteFleetGroup(ctx, req.params.name);
          return "/groups";
        }
        return groupHref(req.params.name);
      }),
  );
  web.post<{ Params: { name: string } }>(
    "/groups/:name/rename",
    { preHandler: t.managerOnly },
    (req, reply) =>
      change(reply, async () => {
        const to = field(req.body, "to");
        await renameFleetGroup(ctx, req.params.name, to);
        ctx.logger.info({ from: req.params.name, to, by: by(req) }, "group renamed");
        return groupHref(to);
      }),
  );
  web.post<{ Params: { name: string } }>(
    "/groups/:name/delete",
    { preHandler: t.managerOnly },
    (req, reply) =>
      change(reply, async () => {
        await deleteFleetGroup(ctx, req.params.name);
        ctx.logger.info({ group: req.params.name, by: by(req) }, "group deleted");
        return "/groups";
      }),
  );

  web.post("/values/set", { preHandler: t.managerOnly }, (req, reply) =>
    change(reply, async () => {
      const scope = scopeOf(req.body);
      if (scope === null) throw new ValueRefused("scope: unit or group");
      const target = field(req.body, "target");
      await setFleetValue(ctx, scope, target, field(req.body, "key"), field(req.body, "value"), by(req));
      return backTo(scope, target);
    }),
  );
  web.post("/values/unset", { preHandler: t.managerOnly }, (req, reply) =>
    change(reply, async () => {
      const scope = scopeOf(req.body);
      if (scope === null) throw new ValueRefused("scope: unit or group");
      const target = field(req.body, "target");
      await unsetFleetValue(ctx, scope, target, field(req.body, "key"), by(req));
      return backTo(scope, target);
    }),
  );

  // JSON: the values held (every role), and set/unset (managers; CSRF in x-csrf-token).
  web.get<{ Querystring: { unit?: string; group?: string } }>("/api/v1/values", async (req) => {
    const { unit, group } = req.query;
    const filter =
      unit !== undefined
        ? { scope: "unit" as const, target: unit }
        : group !== undefined
          ? { scope: "group" as const, target: group }
          : {};
    return { values: await listValues(ctx.db, filter) };
  });
  const api = async (reply: FastifyReply, act: () => Promise<unknown>): Promise<FastifyReply> => {
    try {
      return reply.send(await act());
    } catch (e) {
      if (e instanceof ValueRefused)
        return reply.code(400).send({ error: { code: "refused", message: e.message } });
      throw e;
    }
  };
  web.post("/api/v1/values", { preHandler: t.managerOnly }, (req, reply) =>
    api(reply, async () => {
      const scope = scopeOf(req.body);
      if (scope === null) throw new ValueRefused("scope: unit or group");
      const target = field(req.body, "target");
      const key = field(req.body, "key");
      const value = await setFleetValue(ctx, scope, target, key, field(req.body, "value"), by(req));
      return { scope, target, key, value };
    }),
  );
  web.post("/api/v1/values/unset", { preHandler: t.managerOnly }, (req, reply) =>
    api(reply, async () => {
      const scope = scopeOf(req.body);
      if (scope === null) throw new ValueRefused("scope: unit or group");
      const target = field(req.body, "target");
      const key = field(req.body, "key");
      return { removed: await unsetFleetValue(ctx, scope, target, key, by(req)) };
    }),
  );
}

/** Adds enrolled units to a (new or existing) group; refused naming an unknown unit or a bad name. */
async function addUnits(ctx: FleetContext, name: string, units: readonly string[]): Promise<void> {
  const problem = groupNameProblem(name);
  if (problem !== null) throw new ValueRefused(`${problem}; nothing changed`);
  if (units.length === 0)
    throw new ValueRefused("name at least one unit to put in the group; nothing changed");
  const unknown = await unknownUnits(ctx.db, units);
  if (unknown.length > 0)
    throw new ValueRefused(`no unit ${unknown.join(", ")} is enrolled; nothing changed`);
  await addToGroup(ctx.db, name, units);
}
