/**
 * The vending machine's side of DEX/UCS (dex.md §2), for the simulator: answers a reader's ENQ as slave
 * (or, in master role, with its own ENQ so the reader becomes slave), sends its audit file one segment per
 * block, repeats a block on NAK, and counts a read successful at the last acknowledged block. It can open a
 * session by itself to push events. Faults: a corrupted block, silence, a NAK of the reader's handshake.
 */
import type { Link } from "../link.js";
import {
  ACK,
  DexError,
  ENQ,
  EOT,
  ETB,
  ETX,
  firstHandshake,
  frame,
  NAK,
  parseFirstHandshake,
  REV_DTS6,
  SOH,
  STX,
  secondHandshake,
} from "../protocol.js";
import type { DexMachine } from "./machine.js";

export interface VmdFaults {
  /** Never answer anything. */
  silent: boolean;
  /** Corrupt the CRC of this block (1-based) once. */
  corruptBlock: number | null;
  /** Corrupt every block's CRC (the reader must give up cleanly). */
  corruptAlways: boolean;
  /** NAK the reader's first handshake once. */
  nakHandshake: boolean;
  /** Wait this long (ms) before each data block after the first: a slow machine, a long transfer. */
  slowBlockMs: number;
  /** Send the audit file with a wrong G85 (every block's CRC right): a corrupt file, or a machine whose G85 is always wrong. */
  badG85: boolean;
}

export interface VmdStats {
  sessions: number;
  completed: number;
  failed: number;
  naksReceived: number;
  lastError: string | null;
  /** ENQs left unanswered while silent. */
  enqIgnored: number;
  /** Data blocks sent (repeats included), all sessions. */
  blocksSent: number;
}

const RESENDS = 3;

export class VmdSim {
  readonly faults: VmdFaults = {
    silent: false,
    corruptBlock: null,
    corruptAlways: false,
    nakHandshake: false,
    slowBlockMs: 0,
    badG85: false,
  };
  readonly stats: VmdStats = {
    sessions: 0,
    completed: 0,
    failed: 0,
    naksReceived: 0,
    lastError: null,
    enqIgnored: 0,
    blocksSent: 0,
  };
  private stopped = false;
  private busy = false;

  constructor(
    private readonly link: Link,
    readonly machine: DexMachine,
    /** `slave`: the usual MDB-era VMC; `master`: an older controller that answers ENQ with its own ENQ. */
    public role: "slave" | "master" = "slave",
  ) {}

  /** Answers sessions until `stop()`. */
  async serve(): Promise<void> {
    while (!this.stopped) {
      const push = this.pushes.shift();
      if (push) {
        push(await this.session(() => this.asMaster(false, "events")));
        continue;
      }
      const tok = await this.link.token(100);
      if (tok?.t === "enq" && this.faults.silent) this.stats.enqIgnored++;
      if (tok?.t !== "enq" || this.faults.silent || this.busy) continue;
      await this.session(() => (this.role === "slave" ? this.asSlave() : this.asMaster(true, "audit")));
    }
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.pushes.splice(0)) p(false);
    this.link.queue.stop();
  }

  private readonly pushes: ((ok: boolean) => void)[] = [];

  /** The machine opens a session by itself and pushes its events (the reader answers as slave). */
  push(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => this.pushes.push(resolve));
  }

  private async session(run: () => Promise<void>): Promise<boolean> {
    this.busy = true;
    this.stats.sessions++;
    try {
      await run();
      this.stats.completed++;
      return true;
    } catch (err) {
      this.stats.failed++;
      this.stats.lastError = err instanceof Error ? err.message : String(err);
      await this.link.send(Buffer.of(EOT)).catch(() => undefined);
      return false;
    } finally {
      this.busy = false;
    }
  }

  private async asSlave(): Promise<void> {
    await this.link.send(ACK[0]);
    const hs = parseFirstHandshake(await this.receiveFrame(true));
    if (!hs) throw new DexError("protocol", "unreadable first handshake");
    if (hs.op !== "R") this.machine.configRequests++;
    if (hs.op !== "R") throw new DexError("refused", `the reader asked '${hs.op}', not a read`);
    // the reader's EOT ended its first handshake: at least 100 ms before the machine's ENQ (dex.md §2)
    await this.link.clock.sleep(this.link.timers.turnaroundMs);
    await this.enquire();
    await this.sendFrames([secondHandshake("00", this.machine.opts.commId, hs.rev)], SOH);
    await this.sendData("audit");
  }

  private async asMaster(enqAnswered: boolean, what: "audit" | "events"): Promise<void> {
    await this.enquire(enqAnswered);
    await this.sendFrames([firstHandshake(this.machine.opts.commId, "S", REV_DTS6)], SOH);
    const enq = await this.link.token(this.link.timers.lateEnqMs);
    if (enq?.t !== "enq") throw new DexError("timeout", "the reader did not start the second handshake");
    await this.link.send(ACK[0]);
    const answer = (await this.receiveFrame(false)).toString("latin1");
    if (!answer.startsWith("00"))
      throw new DexError("refused", `the reader answered '${answer.slice(0, 2)}'`);
    await this.sendData(what);
  }

  /** ENQ until DLE 0 (`answered`: our ENQ crossed the reader's, which then answers DLE 0 to it). */
  private async enquire(answered = false): Promise<void> {
    for (let i = 0; i < RESENDS; i++) {
      await this.link.send(Buffer.of(ENQ));
      const tok = await this.link.token(this.link.timers.replyMs);
      if (tok?.t === "ack" && tok.n === 0) return;
      if (answered && tok?.t === "enq") continue;
    }
    throw new DexError("silent", "the reader did not answer ENQ");
  }

  /** Reads one SOH frame (NAK on bad CRC, or once on the fault), acknowledges DLE 1, waits EOT. */
  private async receiveFrame(mayNak: boolean): Promise<Buffer> {
    for (let i = 0; i <= RESENDS; i++) {
      const tok = await this.link.token(this.link.timers.replyMs);
      if (tok?.t !== "frame") throw new DexError("timeout", "no handshake frame");
      const f = await this.link.frame();
      if (!f.crcOk || (mayNak && this.faults.nakHandshake)) {
        if (f.crcOk) this.faults.nakHandshake = false;
        await this.link.send(Buffer.of(NAK));
        continue;
      }
      await this.link.send(ACK[1]);
      await this.link.token(this.link.timers.replyMs); // EOT
      return f.payload;
    }
    throw new DexError("crc", "the handshake failed its CRC");
  }

  private async sendData(what: "audit" | "events"): Promise<void> {
    const file =
      what === "audit" ? this.machine.auditFile(new Date(this.link.clock.now())) : this.machine.eventsFile();
    // a wrong G85: its first hex digit changed, the file otherwise intact
    const text = this.faults.badG85
      ? file.replace(/\r\nG85\*([0-9A-F])/, (_, d: string) => `\r\nG85*${d === "0" ? "1" : "0"}`)
      : file;
    const blocks = text
      .split(/(?<=\r\n)/)
      .filter((l) => l.length > 0)
      .map((l) => Buffer.from(l, "latin1"));
    await this.enquire();
    await this.sendFrames(blocks, STX);
    if (what === "audit") this.machine.readCompleted();
  }

  /** Sends blocks, each until acknowledged with the alternating DLE 1 / DLE 0; then EOT. */
  private async sendFrames(payloads: readonly Buffer[], start: typeof SOH | typeof STX): Promise<void> {
    let expect: 0 | 1 = 1;
    for (let i = 0; i < payloads.length; i++) {
      const payload = payloads[i] ?? Buffer.alloc(0);
      if (start === STX && i > 0 && this.faults.slowBlockMs > 0)
        await this.link.clock.sleep(this.faults.slowBlockMs);
      const wire = frame(start, payload, i === payloads.length - 1 || start === SOH ? ETX : ETB);
      let tries = 0;
      for (;;) {
        if (++tries > RESENDS + 1)
          throw new DexError("nak", `block ${i + 1} was refused ${RESENDS + 1} times`);
        const corrupt = start === STX && (this.faults.corruptAlways || this.faults.corruptBlock === i + 1);
        if (corrupt && !this.faults.corruptAlways) this.faults.corruptBlock = null;
        const sent = Buffer.from(wire);
        if (corrupt) sent[sent.length - 1] = (sent[sent.length - 1] ?? 0) ^ 0x5a;
        await this.link.send(sent);
        if (start === STX) this.stats.blocksSent++;
        const tok = await this.link.token(this.link.timers.replyMs);
        if (tok?.t === "ack" && tok.n === expect) break;
        if (tok?.t === "nak") this.stats.naksReceived++;
        else if (tok?.t === "eot") throw new DexError("aborted", "the reader ended the session");
        else if (tok === null) throw new DexError("timeout", `no answer to block ${i + 1}`);
      }
      expect = expect === 1 ? 0 : 1;
    }
    await this.link.send(Buffer.of(EOT));
  }
}
