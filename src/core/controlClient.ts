/**
 * The client side of the control protocol (src/core/control.ts): `controlRequest` for one request on a
 * fresh connection (the CLI, the update health gate) and `ControlClient`, a persistent connection that
 * matches answers to requests by id and hands pushed events to listeners (the technician console).
 */
import { createConnection, type Socket } from "node:net";
import {
  type ControlAnswer,
  ControlConnectionError,
  ControlError,
  type ControlEvent,
  ControlProtocolError,
  DEFAULT_TIMEOUT_MS,
  encodeRequest,
  LineSplitter,
  parseAnswer,
} from "./control.js";

export interface ControlRequestOptions {
  /** How long to wait for the answer, ms (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
}

/**
 * One request on a fresh connection: connects, sends `cmd`, resolves with the answer's result. Rejects
 * with ControlError (the daemon refused), ControlConnectionError (unreachable, closed, timed out) or
 * ControlProtocolError (the answer is not a v1 answer).
 */
export async function controlRequest(
  socketPath: string,
  cmd: string,
  args: Record<string, unknown> = {},
  opts: ControlRequestOptions = {},
): Promise<unknown> {
  const client = await ControlClient.connect(socketPath, opts);
  try {
    return await client.request(cmd, args, opts);
  } finally {
    client.close();
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * A persistent connection (the console session: the login is per connection). Requests are answered in
 * any order and matched by id; events go to `onEvent` listeners; `onClose` fires once when the daemon
 * goes away (every pending request is rejected with ControlConnectionError "closed").
 */
export class ControlClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<(e: ControlEvent) => void>();
  private readonly closeListeners = new Set<(err: Error | null) => void>();
  private closed = false;

  private constructor(private readonly socket: Socket) {
    const splitter = new LineSplitter(
      (line) => this.onLine(line),
      () => this.fail(new ControlProtocolError("badAnswer", "answer line too long")),
    );
    socket.on("data", (chunk: Buffer) => splitter.push(chunk));
    socket.on("error", (err) => this.fail(new ControlConnectionError("closed", err.message)));
    socket.on("close", () => this.fail(null));
  }

  static connect(socketPath: string, opts: ControlRequestOptions = {}): Promise<ControlClient> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const socket = createConnection({ path: socketPath });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new ControlConnectionError("timeout", `no connection to ${socketPath} in ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(new ControlClient(socket));
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new ControlConnectionError(
            "unreachable",
            `cannot reach the daemon at ${socketPath}: ${err.code ?? err.message}`,
          ),
        );
      });
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends `cmd` and resolves with the result (rejects as controlRequest does). */
  request(
    cmd: string,
    args: Record<string, unknown> = {},
    opts: ControlRequestOptions = {},
  ): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new ControlConnectionError("closed", "the connection to the daemon is closed"));
    const id = this.nextId++;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ControlConnectionError("timeout", `no answer to ${cmd} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.write(encodeRequest(id, cmd, args));
    });
  }

  onEvent(listener: (e: ControlEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onClose(listener: (err: Error | null) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close(): void {
    this.socket.end();
    this.socket.destroy();
    this.fail(null);
  }

  private onLine(line: string): void {
    let msg: ControlAnswer | ControlEvent;
    try {
      msg = parseAnswer(line);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if ("event" in msg) {
      for (const l of this.eventListeners) l(msg);
      return;
    }
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new ControlError(msg.error));
  }

  private fail(err: Error | null): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err ?? new ControlConnectionError("closed", "the daemon closed the connection"));
    }
    this.pending.clear();
    for (const l of this.closeListeners) l(err);
  }
}
