/**
 * `npm run bench -- display`: what drawing a screen costs (issue 46), against a durable commit on the same
 * disk. The figure is the median time of one screen on a 240×240 16-bit framebuffer (a regular file with a
 * fake sysfs standing in for /dev/fb1): the QR code from qrcode, the 1-bit layout, RGB565 conversion and the
 * one positioned write. The comparison is the median durable commit of a SQLite WAL transaction with
 * `synchronous=FULL` (the journal's setting) of one small row, in the same temporary directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { checkinUri, type Screen } from "../drivers/display/display.js";
import { createFramebufferDisplay } from "../drivers/display/framebuffer.js";
import { type BenchFigure, runFiguresWhenMain } from "./benchFigure.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const round = (ms: number) => Math.round(ms * 1000) / 1000;

export async function benchDisplay(rounds = 200): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), "vendd-bench-display-"));
  try {
    const sysfs = join(dir, "sys");
    mkdirSync(sysfs);
    writeFileSync(join(sysfs, "virtual_size"), "240,240\n");
    writeFileSync(join(sysfs, "bits_per_pixel"), "16\n");
    writeFileSync(join(sysfs, "stride"), "480\n");
    const device = join(dir, "fb1");
    writeFileSync(device, Buffer.alloc(480 * 240));
    const display = createFramebufferDisplay({ device, sysfs });
    const link = checkinUri("servicepos", "123456789012345");
    const draws: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // A new amount each time: a screen equal to the last one is not redrawn.
      const screen: Screen = { kind: "pay", amount: 100 + i, currency: "DKK", checkinUri: link, item: 1 };
      const t = performance.now();
      display.show(screen);
      draws.push(performance.now() - t);
    }
    await display.close();

    const db = new Database(join(dir, "commit.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const commits: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      db.transaction(() => insert.run(`row ${i}`))();
      commits.push(performance.now() - t);
    }
    db.close();

    const draw = median(draws);
    const commit = median(commits);
    return [
      {
        name: "display.drawMs240x240x16 (median screen on a framebuffer)",
        figure: round(draw),
        unit: "ms",
        target: `< a durable commit (${round(commit)} ms here)`,
        pass: draw < commit,
      },
      {
        name: "display.durableCommitMs (median WAL commit, synchronous=FULL)",
        figure: round(commit),
        unit: "ms",
        target: "for comparison",
        pass: true,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runFiguresWhenMain(import.meta.url, () => benchDisplay());
