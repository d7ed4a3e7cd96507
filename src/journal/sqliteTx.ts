import type Database from "better-sqlite3";
import { JournalError, type JournalWrite, WRITE_DURABILITY } from "./journal.js";

/**
 * The transaction machinery of a SQLite journal connection (sqlite.ts extends it): nested `atomically`,
 * per-write durability classes (WRITE_DURABILITY) and the commit counters.
 */
export abstract class SqliteTransactions {
  constructor(protected readonly db: Database.Database) {}

  /**
   * The connection's transaction state, in one object: the open transaction's depth and durability
   * (declared at its start), whether it wrote anything, the commit counters, and `tail`, the non-durable
   * commits since the last durable commit or checkpoint (what a power cut may take). One object rather than
   * fields, so that a wrapper made with `Object.create(journal)` (tests) shares it instead of shadowing it.
   */
  protected readonly tx = { depth: 0, durable: true, wrote: false, committed: 0, synced: 0, tail: 0 };

  get commits(): number {
    return this.tx.committed;
  }

  get durableCommits(): number {
    return this.tx.synced;
  }

  /** `PRAGMA synchronous` now: 2 (FULL) between transactions, 1 (NORMAL) inside a non-durable one. */
  get synchronous(): number {
    return Number(this.db.pragma("synchronous", { simple: true }));
  }

  atomically<T>(fn: () => T, opts?: { durable?: boolean }): T {
    if (this.tx.depth > 0) return fn();
    return this.transaction(opts?.durable ?? true, () => this.db.transaction(fn)());
  }

  /**
   * Runs `fn` as the outermost transaction at the given durability: `synchronous` can only change between
   * transactions (SQLite refuses it inside one), so it is set before and put back to FULL after.
   */
  private transaction<T>(durable: boolean, fn: () => T): T {
    if (!durable) this.db.pragma("synchronous = NORMAL");
    this.tx.depth++;
    this.tx.durable = durable;
    this.tx.wrote = false;
    try {
      const result = fn();
      if (this.tx.wrote) {
        this.tx.committed++;
        if (durable) {
          this.tx.synced++;
          this.tx.tail = 0;
        } else this.tx.tail++;
      }
      return result;
    } finally {
      this.tx.depth--;
      this.tx.durable = true;
      if (!durable) this.db.pragma("synchronous = FULL");
    }
  }

  /**
   * One write of class `kind` (WRITE_DURABILITY): joins the open transaction, or commits alone at its own
   * durability. A durable write in a non-durable transaction is refused: its row would not be synced
   * before the request it precedes.
   */
  protected write<T>(kind: JournalWrite, fn: () => T): T {
    const cls = WRITE_DURABILITY[kind];
    if (this.tx.depth > 0 && !this.tx.durable && cls === "durable")
      throw new JournalError(
        "durability",
        `journal write ${kind} needs a durable commit, inside a transaction declared non-durable`,
      );
    try {
      if (this.tx.depth > 0) {
        const result = fn();
        this.tx.wrote = true;
        return result;
      }
      return this.transaction(cls === "durable", () => {
        const result = fn();
        this.tx.wrote = true;
        return result;
      });
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError("io", `journal write failed (${kind}): ${(e as Error).message}`, { cause: e });
    }
  }
}
