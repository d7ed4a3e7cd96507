import type Database from "better-sqlite3";
import type { Intent, PlanMember, PlanUsage, SessionRow, VendRow } from "./journal.js";
import { type IntentDbRow, type SessionDbRow, toIntent, toSession } from "./rows.js";
import { planMemberOf, planUsageOf } from "./sqlitePlan.js";
import { SqliteTransactions } from "./sqliteTx.js";
import type { Statements } from "./statements.js";

/** The journal's reads (sqlite.ts extends it): sessions, intents, vends, plan usage, the integrity check. */
export abstract class SqliteReads extends SqliteTransactions {
  constructor(
    db: Database.Database,
    protected readonly stmts: Statements,
  ) {
    super(db);
  }

  planMember(sessionId: string): PlanMember | undefined {
    return planMemberOf(this.stmts, sessionId);
  }

  planUsage(memberId: string, period: string): PlanUsage {
    return planUsageOf(this.stmts, memberId, period);
  }

  vends(sessionId: string): VendRow[] {
    return (this.stmts.vends.all(sessionId) as VendRow[]).map((v) => ({ ...v }));
  }

  session(sessionId: string): SessionRow | undefined {
    const row = this.stmts.session.get(sessionId) as SessionDbRow | undefined;
    return row && toSession(row);
  }

  intents(sessionId: string): Intent[] {
    return (this.stmts.intents.all(sessionId) as IntentDbRow[]).map(toIntent);
  }

  unresolved(): SessionRow[] {
    return (this.stmts.unresolved.all() as SessionDbRow[]).map(toSession);
  }

  ownsLiveOrder(orderId: string): boolean {
    return this.stmts.ownsLive.get(orderId) !== undefined;
  }

  sessions(opts?: { limit?: number }): SessionRow[] {
    return (this.stmts.sessions.all(opts?.limit ?? 1_000_000) as SessionDbRow[]).map(toSession);
  }

  /** `PRAGMA integrity_check`; "ok" when healthy. */
  integrityCheck(): string {
    return String(this.db.pragma("integrity_check", { simple: true }));
  }
}
