import { channel } from "node:diagnostics_channel";
import { type Stats, statSync } from "node:fs";
import type { BindingInterface } from "@serialport/bindings-cpp";
import { SerialPortStream } from "@serialport/stream";
import type { Clock, Timer } from "../../../src/core/clock.js";
import { LineSplitter } from "./lineSplitter.js";

/**
 * `node:diagnostics_channel` names for measuring latency at the unit's serial edge (scripts/bench-latency.ts).
 * Each message is a `SerialEdgeMessage`; nothing is built or published while nobody subscribes.
 * - `SERIAL_WRITTEN_CHANNEL`: a line the OS has taken (the port's write and drain completed);
 * - `SERIAL_LINE_CHANNEL`: a complete line read from the port, before the driver handles it.
 */
export const SERIAL_WRITTEN_CHANNEL = "vendd:vmc:written";
export const SERIAL_LINE_CHANNEL = "vendd:vmc:line";

/** One line at the serial edge; `at` is `performance.now()` at that moment. */
export interface SerialEdgeMessage {
  line: string;
  at: number;
}

const writtenChannel = channel(SERIAL_WRITTEN_CHANNEL);
const lineChannel = channel(SERIAL_LINE_CHANNEL);

/** What the link reports upward. Called synchronously from the port's data and close events. */
export interface LinkHandlers {
  /** One complete line, terminator removed (at most `maxLineBytes`). */
  onLine(line: string): void;
  /** `count` over-long lines were discarded. */
  onOverlong(count: number): void;
  /** The port closed without `close()` being called (unplug, adapter power loss, I/O error). */
  onLost(reason: string): void;
}

export interface LinkOptions {
  path: string;
  baudRate: number;
  maxLineBytes: number;
  /** Injected binding (the mock binding in byte-level tests); the platform binding otherwise. */
  binding?: BindingInterface;
  clock: Clock;
  /** Interval of the device-node check, milliseconds. */
  presenceCheckMs: number;
  /** Minimum time between two reads that follow data, milliseconds (0 = read as fast as data comes). */
  readPacingMs: number;
}

/**
 * Paces reads: after a read that returned data, the next read waits until `ms` have passed, so a flood of
 * small chunks (1,000 `r,ACK` lines per second) costs at most 1000 / `ms` reads per second instead of one
 * read plus one poll per chunk. The first line after a quiet spell is read at once.
 */
function pacedBinding(binding: BindingInterface, clock: Clock, ms: number): BindingInterface {
  if (ms <= 0) return binding;
  return {
    list: () => binding.list(),
    async open(options) {
      const port = await binding.open(options);
      const read = port.read.bind(port);
      let last = Number.NEGATIVE_INFINITY;
      port.read = async (buffer: Buffer, offset: number, length: number) => {
        const wait = last + ms - clock.now();
        if (wait > 0) await clock.sleep(wait);
        const result = await read(buffer, offset, length);
        last = clock.now();
        return result;
      };
      return port;
    },
  };
}

function nodeOf(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** One open serial port split into bounded lines. A new `SerialLink` is made for every (re)open. */
export class SerialLink {
  private closing = false;
  private lost = false;
  private presence: Timer | null = null;

  private constructor(
    private readonly port: SerialPortStream,
    private readonly handlers: LinkHandlers,
  ) {}

  /** Opens the port; rejects with the binding's error when it cannot be opened. */
  static async open(opts: LinkOptions, handlers: LinkHandlers): Promise<SerialLink> {
    // The native binding is loaded only when no binding is injected (style: native modules behind a seam).
    const base = opts.binding ?? (await import("serialport")).SerialPort.binding;
    const binding = pacedBinding(base, opts.clock, opts.readPacingMs);
    const port = new SerialPortStream({ binding, path: opts.path, baudRate: opts.baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    const link = new SerialLink(port, handlers);
    const splitter = new LineSplitter(opts.maxLineBytes);
    port.on("data", (chunk: Buffer) => {
      const { lines, overlong } = splitter.push(chunk);
      if (overlong > 0) handlers.onOverlong(overlong);
      for (const line of lines) {
        if (link.lost || link.closing) return;
        if (lineChannel.hasSubscribers) lineChannel.publish({ line, at: performance.now() });
        handlers.onLine(line);
      }
    });
    port.on("error", (err: Error) => link.markLost(`port error: ${err.message}`));
    port.on("close", (err: unknown) => {
      const why = err instanceof Error ? err.message : "port closed";
      link.markLost(why);
    });
    link.watchNode(opts);
    return link;
  }

  /**
   * When the device node vanishes or is replaced, the port is lost. Needed because a hung-up PTY (and some
   * USB-serial drivers) make reads return 0 bytes forever instead of an error, so the binding never
   * reports the disconnect. Only paths that exist in the file system are watched.
   */
  private watchNode(opts: LinkOptions): void {
    const first = nodeOf(opts.path);
    if (!first) return;
    const check = () => {
      const now = nodeOf(opts.path);
      if (!now || now.rdev !== first.rdev || now.ino !== first.ino) {
        this.markLost("device node disappeared");
        return;
      }
      if (!this.lost && !this.closing) this.presence = opts.clock.setTimer(opts.presenceCheckMs, check);
    };
    this.presence = opts.clock.setTimer(opts.presenceCheckMs, check);
  }

  /** Writes one line and waits until the OS took it; rejects when the port is gone. */
  write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.lost || this.closing || !this.port.isOpen) {
        reject(new Error("port is not open"));
        return;
      }
      this.port.write(text, "latin1", (err) => {
        if (err) reject(err);
        else
          this.port.drain((e) => {
            if (e) {
              reject(e);
              return;
            }
            if (writtenChannel.hasSubscribers)
              writtenChannel.publish({ line: text.trimEnd(), at: performance.now() });
            resolve();
          });
      });
    });
  }

  /** Closes the port on purpose; `onLost` is not called. Idempotent. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.presence?.cancel();
    if (!this.port.isOpen) return;
    await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  private markLost(reason: string): void {
    if (this.closing || this.lost) return;
    this.lost = true;
    this.presence?.cancel();
    if (this.port.isOpen) this.port.close(() => undefined);
    this.handlers.onLost(reason);
  }
}
