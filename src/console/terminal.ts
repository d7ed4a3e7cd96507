/**
 * The console session's terminal side: the readline interface (line editing, history, tab completion)
 * writing through a mute switch (the PIN is read with echo off), answers cut and messages wrapped to the
 * terminal's width (80 columns when it does not say), the prompt.
 */
import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import { complete } from "./commands.js";
import { fitWidth, WIDTH, wrap } from "./render.js";

export class Terminal {
  /** Echo off (the PIN, a flood being dropped). */
  muted = false;
  readonly rl: Interface;

  constructor(
    private readonly output: NodeJS.WritableStream,
    input: NodeJS.ReadableStream,
    terminal: boolean,
  ) {
    // A terminal that goes away (hangup, closed pipe) ends the session, it does not crash it.
    (output as NodeJS.WritableStream & { on?: (e: string, f: () => void) => void }).on?.("error", () => {});
    const out = new Writable({
      write: (chunk: Buffer | string, _enc, cb) => {
        if (!this.muted) output.write(chunk);
        cb();
      },
    });
    this.rl = createInterface({
      input,
      output: out,
      terminal,
      historySize: 100,
      completer: (line: string) => complete(line),
    });
  }

  columns(): number {
    const c = (this.output as { columns?: unknown }).columns;
    return typeof c === "number" && Number.isSafeInteger(c) && c >= 40 ? Math.min(c, 500) : WIDTH;
  }

  /** One answer, cut to the terminal's width. */
  say(text: string): void {
    this.output.write(`${fitWidth(text, this.columns()).replace(/\n/g, "\r\n")}\r\n`);
  }

  /** A message or an error, wrapped to the terminal's width (never cut). */
  tell(text: string): void {
    this.output.write(`${wrap(text, this.columns()).replace(/\n/g, "\r\n")}\r\n`);
  }

  /** Raw text (no width cut, no line end). */
  write(text: string): void {
    this.output.write(text);
  }

  /** The command prompt, or the login prompt with echo off. */
  prompt(loggedIn: boolean): void {
    if (loggedIn) {
      this.muted = false;
      this.rl.setPrompt("vendd> ");
      this.rl.prompt();
    } else {
      this.muted = false;
      this.rl.setPrompt("");
      this.output.write("PIN or badge: ");
      this.muted = true;
      this.rl.prompt();
    }
  }

  /** Empties the history (the PIN never enters it). */
  forgetHistory(): void {
    const h = (this.rl as unknown as { history?: string[] }).history;
    if (Array.isArray(h)) h.splice(0, h.length);
  }
}
