import { expect, it } from "vitest";
import { ctx } from "./checkin.test-support.js";
import { rows } from "./session.rows.test-support.js";
import { rest } from "./steps.js";
import { transitionTable } from "./table.test-support.js";

transitionTable("engine transitions (check-in first): ready and the session's payment", ctx, rows);

it("starts in the right rest state for each flow and mode", () => {
  expect(rest(ctx)).toMatchObject({ state: { tag: "ready", allocating: false } });
  expect(rest(ctx).effects.map((e) => e.type)).toEqual(["show", "watchCheckin"]);
  expect(rest(ctx).effects[0]).toMatchObject({ screen: { kind: "idle", checkinUri: ctx.checkinUri } });
  const idlePayment = rest({ ...ctx, checkinMode: "idlePayment" }).effects;
  expect(idlePayment.map((e) => e.type)).toEqual(["show", "allocateSession"]);
  // No QR code until the idle payment exists.
  expect(idlePayment[0]).toMatchObject({ screen: { kind: "idle", checkinUri: null } });
  expect(rest({ ...ctx, flow: "selection" })).toMatchObject({ state: { tag: "idle" } });
});
