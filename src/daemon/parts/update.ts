/**
 * The update health part: at start, journals the update applier's last outcome (a bundle, or a console
 * change) in the audit log, and with a fleet link as a `version` event (../controlUnit.ts
 * auditUpdateOutcome). The applier's health gate itself reads the control socket's `status`.
 */
import { auditUpdateOutcome } from "../controlUnit.js";
import type { Part } from "./part.js";

export function updateHealthPart(): Part<null> {
  return {
    name: "update",
    start(ctx) {
      auditUpdateOutcome(ctx.config, ctx.devices.journal, ctx.logger);
    },
    async stop() {},
    status: () => null,
  };
}
