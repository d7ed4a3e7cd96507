import type { Journal } from "../journal/journal.js";

/**
 * The money-safety ordering of a step, in one place: its journal writes commit in one transaction, and the
 * I/O it starts is queued until that commit, so nothing is ever sent that the journal does not hold
 * durably. A transaction that rolls back drops its queued I/O: the step did not happen.
 *
 * A step is committed without waiting for fsync (`durable: false`) only when none of its effects needs it
 * (`needsDurableCommit`, effects.ts); the journal refuses a durable-class write in such a transaction, so
 * a misclassified step fails loudly instead of sending a request ahead of its unsynced row.
 */
export class CommitThenLaunch {
  private depth = 0;
  private queued: (() => void)[] = [];

  constructor(
    private readonly journal: Pick<Journal, "atomically">,
    /** Called with the error when a transaction could not be committed. */
    private readonly onRollback: (err: unknown) => void,
  ) {}

  /**
   * Runs `fn` in a transaction (joining one already open, and its durability); false when it could not be
   * committed. `durable` (default true): the commit waits for the WAL fsync.
   */
  atomic(fn: () => void, durable = true): boolean {
    if (this.depth > 0) {
      fn();
      return true;
    }
    this.depth++;
    try {
      this.journal.atomically(fn, { durable });
    } catch (err) {
      // Rolled back: none of the step's requests leave.
      this.queued = [];
      this.depth--;
      this.onRollback(err);
      return false;
    }
    this.depth--;
    const queued = this.queued;
    this.queued = [];
    for (const io of queued) io();
    return true;
  }

  /** Runs `io` once the open transaction commits, or at once outside one. */
  afterCommit(io: () => void): void {
    if (this.depth > 0) this.queued.push(io);
    else io();
  }
}
