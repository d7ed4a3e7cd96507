/**
 * The members part (issue 18): the entitlement list and the member gate the engine and the NFC reader
 * share (../members.ts), when the config names an entitlement key. A key that cannot be read leaves the
 * unit without plan vends (logged), never out of service.
 */
import { type Members, startMembers } from "../members.js";
import type { Part } from "./part.js";

export interface MembersPart extends Part<{ listInForce: boolean } | null> {
  /** The members' list and gate; null without plan vends. */
  readonly current: Members | null;
}

/** `idle`: true when no sale is in progress (the gate serves a member's tap only then). */
export function membersPart(idle: () => boolean): MembersPart {
  let members: Members | null = null;
  return {
    name: "members",
    get current() {
      return members;
    },
    start(ctx) {
      members = startMembers(ctx.loaded, ctx.deps, ctx.devices, idle);
    },
    async stop() {
      members?.close();
    },
    status: () => (members === null ? null : { listInForce: members.store.current() !== null }),
  };
}
