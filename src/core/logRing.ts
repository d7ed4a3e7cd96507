/**
 * The daemon's recent log lines in memory, for the technician console's `logs` and `errors`. It sits
 * behind the logger's scrubbing destination (log.ts), so every line it holds has had its secrets removed
 * already. Bounded: the last `size` lines, and separately the last `size` warnings and errors.
 */
import { printable } from "./printable.js";

export interface LogLine {
  /** ms since the epoch (the line's own time, or when it was written). */
  at: number;
  /** pino level: 10 trace … 60 fatal. */
  level: number;
  /** One line of text, at most 78 columns wide, ready for a terminal. */
  text: string;
}

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};
/** Fields already shown, or too noisy, for the one-line form. */
const SHOWN = new Set(["level", "time", "msg", "component", "unit", "pid", "hostname", "v"]);

/** A pino JSON line as one terminal line: `HH:MM:SS LEVEL component: message key=value ...`. */
export function formatLogLine(line: string, width = 78): LogLine {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    return { at: Date.now(), level: 30, text: printable(line.trim(), width) };
  }
  if (typeof rec !== "object" || rec === null || Array.isArray(rec))
    return { at: Date.now(), level: 30, text: printable(line.trim(), width) };
  const r = rec as Record<string, unknown>;
  const at = typeof r.time === "number" ? r.time : Date.now();
  const level = typeof r.level === "number" ? r.level : 30;
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, "0");
  const time = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  const component = typeof r.component === "string" ? `${r.component}: ` : "";
  const extra = Object.entries(r)
    .filter(([k]) => !SHOWN.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const msg = typeof r.msg === "string" ? r.msg : "";
  const text = `${time} ${LEVELS[level] ?? String(level)} ${component}${msg}${extra === "" ? "" : ` ${extra}`}`;
  const shown = printable(text, width);
  return { at, level, text: shown.length > width ? `${shown.slice(0, width - 1)}…` : shown };
}

export class LogRing {
  private readonly lines: LogLine[] = [];
  private readonly problems: LogLine[] = [];
  private readonly listeners = new Set<(l: LogLine) => void>();

  constructor(private readonly size = 500) {}

  /** A destination for pino (after scrubbing): each line is kept, passed to `target` and to listeners. */
  tee(target: { write(line: string): unknown }): { write(line: string): void } {
    return {
      write: (line: string) => {
        target.write(line);
        this.add(line);
      },
    };
  }

  add(raw: string): void {
    for (const part of raw.split("\n")) {
      if (part.trim() === "") continue;
      const l = formatLogLine(part);
      push(this.lines, l, this.size);
      if (l.level >= 40) push(this.problems, l, this.size);
      for (const f of this.listeners) f(l);
    }
  }

  recent(limit: number): LogLine[] {
    return this.lines.slice(-limit);
  }

  /** Recent warnings, errors and fatal lines. */
  recentProblems(limit: number): LogLine[] {
    return this.problems.slice(-limit);
  }

  follow(listener: (l: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function push(list: LogLine[], l: LogLine, size: number): void {
  list.push(l);
  if (list.length > size) list.splice(0, list.length - size);
}
