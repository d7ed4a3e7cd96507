/**
 * The receivers of the alert tests (issue 37): a real SMTP server (the `smtp-server` package: STARTTLS
 * with a self-signed certificate, password authentication) and a real HTTP webhook receiver that checks
 * each request's HMAC-SHA256 signature and remembers change ids, so a repeat is counted and dropped, the
 * way docs/alerts.md tells a receiver to do it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** The connection had been upgraded with STARTTLS when the message came. */
  secure: boolean;
  user: string | undefined;
  subject: string;
  messageId: string;
  changeIds: string[];
  raw: string;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** Unfolded header `name` of a raw message. */
function header(raw: string, name: string): string {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? "";
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
  const re = new RegExp(`^${name}:\\s*(.*)$`, "im");
  return re.exec(unfolded)?.[1]?.trim() ?? "";
}

export async function startSmtp(
  tls: { cert: string; key: string },
  user: string,
  password: string,
): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    key: tls.key,
    cert: tls.cert,
    authMethods: ["PLAIN", "LOGIN"],
    disabledCommands: [],
    // The client must authenticate, and only over TLS (smtp-server's default: no AUTH before STARTTLS).
    authOptional: false,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) cb(null, { user: auth.username });
      else cb(new Error("bad credentials"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const ids = header(raw, "X-Vendd-Change-Ids");
        mails.push({
          secure: session.secure,
          user: typeof session.user === "string" ? session.user : undefined,
          subject: header(raw, "Subject"),
          messageId: header(raw, "Message-ID"),
          changeIds: ids === "" ? [] : ids.split(",").map((s) => s.trim()),
          raw,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface ReceivedHook {
  id: string;
  type: string;
  body: Record<string, unknown>;
  /** Signature checked: HMAC-SHA256 of `t.body` with the secret, and `t` within 5 minutes. */
  valid: boolean;
  /** Seen before (a repeat of a change id): dropped by the receiver. */
  duplicate: boolean;
}

export interface WebhookReceiver {
  url: string;
  hooks: ReceivedHook[];
  /** Unique change ids accepted, in order. */
  ids(): string[];
  /** The next `n` requests are processed but not answered until `release()` (a sender killed meanwhile). */
  holdNext(n: number): void;
  /** Resolves when a held request has arrived. */
  held(): Promise<void>;
  release(): void;
  /** Answer the next `n` requests with 500. */
  failNext(n: number): void;
  /** Forgets what it received (between tests). */
  reset(): void;
  close(): Promise<void>;
}

/** Verifies `x-vendd-signature: t=…,v1=…` over `t + "." + body` (the docs' example, in TypeScript). */
export function verifySignature(secret: string, header: string, body: string, nowSec: number): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (m === null) return false;
  const t = Number(m[1]);
  if (Math.abs(nowSec - t) > 300) return false;
  const want = createHmac("sha256", secret).update(`${m[1]}.${body}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2] ?? "", "hex"));
}

export async function startWebhook(secret: string): Promise<WebhookReceiver> {
  const hooks: ReceivedHook[] = [];
  const seen = new Set<string>();
  let hold = 0;
  let fail = 0;
  const held: ServerResponse[] = [];
  let onHeld: () => void = () => undefined;
  let heldPromise = new Promise<void>((ok) => {
    onHeld = ok;
  });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const sig = String(req.headers["x-vendd-signature"] ?? "");
      const valid = verifySignature(secret, sig, body, Math.floor(Date.now() / 1000));
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        parsed = {};
      }
      if (fail > 0) {
        fail--;
        res.writeHead(500).end();
        return;
      }
      const id = String(parsed.id ?? "");
      hooks.push({ id, type: String(parsed.type ?? ""), body: parsed, valid, duplicate: seen.has(id) });
      if (valid) seen.add(id);
      if (hold > 0) {
        // Processed, but never answered: the sender is killed before it learns that it was delivered.
        hold--;
        held.push(res);
        onHeld();
        return;
      }
      res.writeHead(valid ? 200 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hooks,
    ids: () => [...seen],
    holdNext: (n) => {
      hold = n;
      heldPromise = new Promise<void>((ok) => {
        onHeld = ok;
      });
    },
    held: () => heldPromise,
    release: () => {
      for (const r of held.splice(0)) r.destroy();
    },
    failNext: (n) => {
      fail = n;
    },
    reset: () => {
      hooks.splice(0);
      seen.clear();
      hold = 0;
      fail = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of held.splice(0)) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
