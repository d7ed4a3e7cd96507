/**
 * `vendd bundle pull`: fetch the newest bundle from `updates.pullUrl` and apply it. A conditional GET
 * (If-None-Match with the last ETag; 304 = nothing new), the body streamed to a temporary file in the state
 * directory and checked whole (Content-Length, then the bundle's own end marker and signatures) before
 * anything else; a failure (network, HTTP status, truncated or unverifiable download) schedules the next
 * try with exponential backoff and jitter, persisted so the timer's next call respects it.
 */
import { createWriteStream, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Dispatcher, fetch as undiciFetch } from "undici";
import type { VenddConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { loadUnitKey, signRequest, type UnitKeyPair } from "../core/fleetAuth.js";
import { type ApplyReport, applyBundleFile } from "./apply.js";
import type { ApplyEnv } from "./applyRun.js";
import { MAX_BUNDLE_BYTES } from "./bundle.js";

export const PULL_STATE_FILE = "pull.json";
const DOWNLOAD = ".download.vbundle";

interface PullState {
  etag: string | null;
  failures: number;
  /** Epoch ms before which `pull` does not try again; null = no wait. */
  nextTryAt: number | null;
}

export type PullReport =
  | { result: "backing_off"; until: string; failures: number }
  | { result: "not_modified" }
  | { result: "applied"; report: ApplyReport }
  | { result: "failed"; reason: string; failures: number; nextTryAt: string };

export interface PullOptions {
  url: string;
  stateDir: string;
  minBackoffMs: number;
  maxBackoffMs: number;
  timeoutMs: number;
  /** [0, 1); jitter source. */
  random(): number;
  fetch?: typeof fetch;
  /**
   * The agent for a fleet behind a private CA (config `fleet.caFile`, src/core/fleetCa.ts): the download
   * goes through undici's fetch with it. Absent: the default fetch.
   */
  dispatcher?: Dispatcher;
  /**
   * The unit's fleet key (config `fleet.keyFile`, {@link fleetPullKey}): the GET is signed with it, so a
   * fleet server (`/api/unit/v1/bundle`) knows which unit asks. Absent: an unsigned GET.
   */
  key?: UnitKeyPair;
  /** Epoch ms for the signature's timestamp (default Date.now). */
  now?: () => number;
}

/**
 * The fleet key a pull signs with: null without a `fleet` section or when its key file does not exist yet
 * (`vendd fleet enroll` makes it); throws when the file is there but not a usable key.
 */
export function fleetPullKey(config: VenddConfig): UnitKeyPair | null {
  const file = config.fleet?.keyFile;
  if (file === undefined || !existsSync(file)) return null;
  try {
    return loadUnitKey(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`fleet.keyFile ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The signature headers of the GET (path with its query, empty body), or none without a key. */
function signedHeaders(opts: PullOptions): Record<string, string> {
  if (opts.key === undefined) return {};
  const u = new URL(opts.url);
  return signRequest(opts.key, "GET", `${u.pathname}${u.search}`, "", (opts.now ?? Date.now)());
}

/** Codes of refusals that mean the download itself was bad: retried with backoff, ETag not kept. */
const DOWNLOAD_FAULTS = new Set(["truncated", "not_a_bundle", "unreadable"]);

function readPullState(stateDir: string): PullState {
  try {
    const raw: unknown = JSON.parse(readFileSync(join(stateDir, PULL_STATE_FILE), "utf8"));
    if (typeof raw === "object" && raw !== null) {
      const r = raw as Record<string, unknown>;
      return {
        etag: typeof r.etag === "string" ? r.etag : null,
        failures: typeof r.failures === "number" && Number.isSafeInteger(r.failures) ? r.failures : 0,
        nextTryAt: typeof r.nextTryAt === "number" ? r.nextTryAt : null,
      };
    }
  } catch {
    // Missing or unreadable: start afresh (the worst case is one unconditional download).
  }
  return { etag: null, failures: 0, nextTryAt: null };
}

function writePullState(stateDir: string, s: PullState): void {
  writeFileAtomic(join(stateDir, PULL_STATE_FILE), `${JSON.stringify(s)}\n`);
}

/** The wait after `failures` consecutive failures: doubling from min to max, then "equal jitter". */
export function backoffMs(failures: number, min: number, max: number, random: () => number): number {
  const base = Math.min(max, min * 2 ** Math.max(0, Math.min(failures - 1, 40)));
  return Math.round(base / 2 + random() * (base / 2));
}

async function download(
  opts: PullOptions,
  etag: string | null,
  file: string,
): Promise<"not_modified" | "ok"> {
  const doFetch = opts.fetch ?? viaDispatcher(opts.dispatcher);
  const res = await doFetch(opts.url, {
    headers: { ...signedHeaders(opts), ...(etag === null ? {} : { "if-none-match": etag }) },
    signal: AbortSignal.timeout(opts.timeoutMs),
    redirect: "error",
  });
  if (res.status === 304) {
    await res.body?.cancel();
    return "not_modified";
  }
  if (res.status !== 200 || res.body === null) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  const declared = res.headers.get("content-length");
  const expected = declared === null ? null : Number(declared);
  if (expected !== null && (!Number.isSafeInteger(expected) || expected > MAX_BUNDLE_BYTES)) {
    await res.body.cancel();
    throw new Error("the bundle is larger than 512 MiB");
  }
  let bytes = 0;
  const counted = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
  counted.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_BUNDLE_BYTES) counted.destroy(new Error("the bundle is larger than 512 MiB"));
  });
  await pipeline(counted, createWriteStream(file, { mode: 0o600 }));
  if (expected !== null && bytes !== expected) {
    throw new Error(`truncated download: ${bytes} of ${expected} bytes`);
  }
  return "ok";
}

/** The global fetch, or undici's through `dispatcher` (its Response is the same web Response shape). */
function viaDispatcher(dispatcher: Dispatcher | undefined): typeof fetch {
  if (dispatcher === undefined) return fetch;
  return (async (url: string | URL | Request, init?: RequestInit) =>
    undiciFetch(String(url), {
      ...(init?.headers === undefined ? {} : { headers: init.headers as Record<string, string> }),
      ...(init?.signal == null ? {} : { signal: init.signal }),
      redirect: "error",
      dispatcher,
    })) as unknown as typeof fetch;
}

/** One pull: back off, fetch, verify and apply; the pull state records the ETag or the failure. */
export async function pullBundle(env: ApplyEnv, opts: PullOptions): Promise<PullReport> {
  const state = readPullState(opts.stateDir);
  const now = env.clock.now();
  if (state.nextTryAt !== null && now < state.nextTryAt) {
    return {
      result: "backing_off",
      until: new Date(state.nextTryAt).toISOString(),
      failures: state.failures,
    };
  }
  const fail = (reason: string): PullReport => {
    const failures = state.failures + 1;
    const nextTryAt = now + backoffMs(failures, opts.minBackoffMs, opts.maxBackoffMs, opts.random);
    writePullState(opts.stateDir, { etag: state.etag, failures, nextTryAt });
    env.log(`pull failed (${reason}); next try after ${new Date(nextTryAt).toISOString()}`);
    return { result: "failed", reason, failures, nextTryAt: new Date(nextTryAt).toISOString() };
  };
  const file = join(opts.stateDir, DOWNLOAD);
  rmSync(file, { force: true });
  try {
    let got: "not_modified" | "ok";
    let etag: string | null = null;
    try {
      got = await download(
        {
          ...opts,
          fetch: async (url, init) => {
            const res = await (opts.fetch ?? viaDispatcher(opts.dispatcher))(url, init);
            etag = res.headers.get("etag");
            return res;
          },
        },
        state.etag,
        file,
      );
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return fail(
        `${e.name === "TimeoutError" ? "timed out" : e.message}${e.cause?.code ? ` (${e.cause.code})` : ""}`,
      );
    }
    if (got === "not_modified") {
      writePullState(opts.stateDir, { etag: state.etag, failures: 0, nextTryAt: null });
      return { result: "not_modified" };
    }
    const report = await applyBundleFile(file, env, "pull");
    const last = report.outcomes[0];
    if (
      last !== undefined &&
      last.result === "refused" &&
      last.code !== null &&
      DOWNLOAD_FAULTS.has(last.code)
    ) {
      return fail(last.reason ?? "bad download");
    }
    writePullState(opts.stateDir, { etag, failures: 0, nextTryAt: null });
    return { result: "applied", report };
  } finally {
    rmSync(file, { force: true });
  }
}
