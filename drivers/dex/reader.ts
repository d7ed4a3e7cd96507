/**
 * The DEX reader over a serial port (the machine's DEX jack through a USB-RS232 adapter, 9600 8N1):
 * reads on demand as master, with bounded retries and backoff; answers a machine that opens a session by
 * itself (slave role, e.g. pushing events) and hands its file to `onPush`. A failed session is aborted with
 * EOT and the line drained, so the port stays open and usable for the next read.
 */
import type { BindingInterface } from "@serialport/bindings-cpp";
import { SerialPortStream } from "@serialport/stream";
import type { Clock } from "../../src/core/clock.js";
import { ByteQueue } from "./byteQueue.js";
import { Link } from "./link.js";
import { DexError, type DexTimers, ENQ, EOT, REV_DTS6, REV_LEGACY, STANDARD_TIMERS } from "./protocol.js";
import { runSession, type SessionResult } from "./session.js";

export interface DexReaderOptions {
  path: string;
  baudRate?: number;
  /** The unit's communication id (3 letters + 7 digits from DTS 6.0). */
  commId: string;
  clock: Clock;
  timers?: Partial<DexTimers>;
  /** Session attempts per read (default 3), with `backoffMs` between them. */
  attempts?: number;
  backoffMs?: number;
  /** The largest audit file accepted (default 256 KiB). */
  maxBytes?: number;
  binding?: BindingInterface;
  /** A session the machine opened by itself, once it completed (or failed). */
  onPush?: (result: DexPushResult) => void;
}

export type DexPushResult = { ok: true; session: SessionResult } | { ok: false; error: DexError };

export interface DexRead extends SessionResult {
  attempts: number;
  rev: string;
}

function asDexError(err: unknown): DexError {
  if (err instanceof DexError) return err;
  return new DexError("port", err instanceof Error ? err.message : String(err));
}

export class DexReader {
  private busy: Promise<unknown> = Promise.resolve();
  private active = false;
  private closed = false;
  private readonly link: Link;
  private readonly queue: ByteQueue;

  private constructor(
    private readonly port: SerialPortStream,
    private readonly opts: DexReaderOptions,
  ) {
    this.queue = new ByteQueue(opts.clock);
    const timers = { ...STANDARD_TIMERS, ...opts.timers };
    this.link = new Link(this.queue, { write: (b) => this.write(b) }, opts.clock, timers);
    port.on("data", (chunk: Buffer) => this.queue.push(chunk));
    port.on("error", () => undefined); // surfaced by the next write
    this.queue.onIdleData = (chunk) => {
      if (!this.active && chunk.includes(ENQ)) void this.answerPush();
    };
  }

  static async open(opts: DexReaderOptions): Promise<DexReader> {
    const binding = opts.binding ?? (await import("serialport")).SerialPort.binding;
    const port = new SerialPortStream({
      binding,
      path: opts.path,
      baudRate: opts.baudRate ?? 9600,
      autoOpen: false,
    });
    await new Promise<void>((resolve, reject) =>
      port.open((err) =>
        err ? reject(new DexError("port", `cannot open ${opts.path}: ${err.message}`)) : resolve(),
      ),
    );
    return new DexReader(port, opts);
  }

  private write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed || !this.port.isOpen) {
        reject(new DexError("port", "the DEX port is not open"));
        return;
      }
      this.port.write(bytes, (err) =>
        err ? reject(err) : this.port.drain((e) => (e ? reject(e) : resolve())),
      );
    });
  }

  /** One at a time: a read waits for a push session in progress, and the other way round. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(async () => {
      this.active = true;
      try {
        return await fn();
      } finally {
        this.active = false;
      }
    });
    this.busy = run.catch(() => undefined);
    return run;
  }

  /** Ends a failed session: EOT, then waits until the line is quiet and forgets what came. */
  private async abort(): Promise<void> {
    await this.write(Buffer.of(EOT)).catch(() => undefined);
    await this.opts.clock.sleep(this.link.timers.interByteMs * 2);
    this.queue.clear();
  }

  private async session(rev: string, handshakeOnly: boolean, machineFirst = false): Promise<SessionResult> {
    const deadline = this.opts.clock.setTimer(this.link.timers.sessionMs, () => this.queue.stop());
    if (!machineFirst) this.queue.clear();
    try {
      return await runSession(this.link, {
        commId: this.opts.commId,
        rev,
        handshakeOnly,
        machineFirst,
        maxBytes: this.opts.maxBytes ?? 256 * 1024,
      });
    } catch (err) {
      await this.abort();
      throw asDexError(err);
    } finally {
      deadline.cancel();
      this.queue.clear();
    }
  }

  /**
   * Reads the audit file (or only shakes hands). Retries `attempts` times with backoff; a machine that
   * refuses the DTS 6 revision (response 02) is asked once more with the legacy one.
   * @throws DexError of the last attempt.
   */
  read(handshakeOnly = false): Promise<DexRead> {
    return this.exclusive(async () => {
      const attempts = this.opts.attempts ?? 3;
      let rev = REV_DTS6;
      let last: DexError = new DexError("aborted", "no attempt was made");
      for (let i = 1; i <= attempts; i++) {
        if (this.closed) throw new DexError("aborted", "the DEX reader was closed");
        try {
          return { ...(await this.session(rev, handshakeOnly)), attempts: i, rev };
        } catch (err) {
          last = asDexError(err);
          if (last.code === "port" || last.code === "too-large") throw last;
          if (last.code === "refused" && last.response === "02" && rev === REV_DTS6) rev = REV_LEGACY;
          else if (i < attempts) await this.opts.clock.sleep((this.opts.backoffMs ?? 1000) * i);
        }
      }
      throw last;
    });
  }

  private async answerPush(): Promise<void> {
    await this.exclusive(async () => {
      // consume up to the ENQ that opened the session; a stray ENQ already answered is gone
      for (;;) {
        const b = await this.queue.next(0);
        if (b === null) return;
        if (b === ENQ) break;
      }
      try {
        const session = await this.session(REV_DTS6, false, true);
        this.opts.onPush?.({ ok: true, session });
      } catch (err) {
        this.opts.onPush?.({ ok: false, error: asDexError(err) });
      }
    }).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.stop(); // a session in progress ends at once instead of at its timers
    await this.busy;
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }
}
