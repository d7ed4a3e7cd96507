/**
 * The simulated vending machine's own audit counters (the VMC side of dex.md §5): every vend the machine
 * makes moves its since-initialisation counters (never reset) and its interval counters (reset after a
 * successful read, as the default AUTO "Data Reset Mode" does). `auditFile()` writes them as EVA-DTS.
 */
import { segment, writeEvaDts } from "../evadtsWrite.js";

export type PayDevice = "CA" | "DA";

interface Pair {
  countInit: number;
  valueInit: number;
  countReset: number;
  valueReset: number;
}

const pair = (): Pair => ({ countInit: 0, valueInit: 0, countReset: 0, valueReset: 0 });

function add(p: Pair, value: number): void {
  p.countInit++;
  p.valueInit += value;
  p.countReset++;
  p.valueReset += value;
}

export interface SimSelection {
  selection: string;
  price: number;
  name: string;
}

export interface MachineOptions {
  commId: string;
  serial: string;
  selections: readonly SimSelection[];
  /** ISO 4217 numeric with the leading 1 (`1978` EUR) and decimal places (ID4). */
  currencyNumeric?: string;
  decimals?: number;
}

export interface DoorEvent {
  date: string;
  time: string;
}

export class DexMachine {
  private readonly byDevice = new Map<string, Pair>();
  private readonly paid = new Map<string, Pair>();
  private readonly cash = pair();
  private readonly cashless = pair();
  private readonly vends = pair();
  private readonly doors: DoorEvent[] = [];
  private doorInit = 0;
  /** Cash taken in (CA3), since reset and since init. */
  private cashIn = { reset: 0, init: 0 };
  private doorReset = 0;
  /** Successful reads (the machine resets its interval counters after each). */
  reads = 0;
  /** Configuration sessions the machine was asked for (a reader must never send one). */
  configRequests = 0;
  /** Interval resets that happened (one per successful read in AUTO mode); since-init counters never reset. */
  intervalResets = 0;

  /** The machine's selections: the configured ones, then any other the VMC vended (added at its price). */
  private readonly selections: SimSelection[];

  constructor(readonly opts: MachineOptions) {
    this.selections = [...opts.selections];
    for (const s of opts.selections) this.paid.set(s.selection, pair());
  }

  /**
   * A vend the machine completed, paid by cash or cashless 1, at `value` (file units). A cash vend takes
   * `cashIn` into the machine (default: the value, exact money); less models a cash shortfall. With
   * `learn`, a selection the machine does not list yet is added at `value` (the VMC's own price list: the
   * MDB side's item numbers), else it is refused.
   */
  vend(selection: string, device: PayDevice, value?: number, cashIn?: number, learn = false): void {
    let sel = this.selections.find((s) => s.selection === selection);
    if (!sel && learn && value !== undefined && /^\d{1,8}$/.test(selection)) {
      sel = { selection, price: value, name: `Item ${selection}` };
      this.selections.push(sel);
    }
    if (!sel) throw new Error(`no selection '${selection}' in the simulated machine`);
    const v = value ?? sel.price;
    add(this.vends, v);
    add(device === "CA" ? this.cash : this.cashless, v);
    if (device === "CA") {
      this.cashIn.reset += cashIn ?? v;
      this.cashIn.init += cashIn ?? v;
    }
    const p = this.paid.get(selection) ?? pair();
    this.paid.set(selection, p);
    add(p, v);
    const key = `${selection}|${device}`;
    const d = this.byDevice.get(key) ?? pair();
    this.byDevice.set(key, d);
    add(d, v);
  }

  door(at: DoorEvent): void {
    this.doors.push(at);
    if (this.doors.length > 10) this.doors.shift();
    this.doorInit++;
    this.doorReset++;
  }

  /** Since-initialisation totals, for tests: they only ever grow. */
  totals(): { vends: number; value: number; cashless: number; cash: number } {
    return {
      vends: this.vends.countInit,
      value: this.vends.valueInit,
      cashless: this.cashless.valueInit,
      cash: this.cash.valueInit,
    };
  }

  /** After the last block of a read was acknowledged: AUTO mode zeroes the interval counters only. */
  readCompleted(): void {
    this.reads++;
    this.intervalResets++;
    const all = [this.cash, this.cashless, this.vends, ...this.paid.values(), ...this.byDevice.values()];
    for (const p of all) {
      p.countReset = 0;
      p.valueReset = 0;
    }
    this.doorReset = 0;
    this.cashIn.reset = 0;
  }

  private dataLines(now: Date): string[] {
    const date = now.toISOString().slice(0, 10).replace(/-/g, "");
    const time = now.toISOString().slice(11, 19).replace(/:/g, "");
    const o = this.opts;
    const vc = (p: Pair) => [p.valueInit, p.countInit, p.valueReset, p.countReset];
    const lines = [
      segment("ID1", o.serial, "SIM-DEX", "0100", "Simulated"),
      segment("ID4", o.decimals ?? 2, o.currencyNumeric ?? "1978"),
      segment("ID5", date, time),
      segment("CB1", o.serial, "SIM-VMC", "0100"),
      segment("VA1", ...vc(this.vends)),
      segment("CA2", ...vc(this.cash)),
      segment("CA3", this.cashIn.reset, this.cashIn.reset, 0, 0, this.cashIn.init, this.cashIn.init, 0, 0),
      segment("CA4", 0, 0, 0, 0),
      segment("DA1", o.commId, "VENDD", "0100"),
      segment("DA2", ...vc(this.cashless)),
    ];
    for (const s of this.selections) {
      const p = this.paid.get(s.selection) ?? pair();
      lines.push(segment("PA1", s.selection, s.price, s.name));
      lines.push(segment("PA2", p.countInit, p.valueInit, p.countReset, p.valueReset));
      for (const dev of ["CA", "DA"] as const) {
        const d = this.byDevice.get(`${s.selection}|${dev}`) ?? pair();
        lines.push(
          segment("PA7", s.selection, dev, 0, s.price, d.countInit, d.valueInit, d.countReset, d.valueReset),
        );
      }
    }
    lines.push(...this.eventLines());
    lines.push(segment("EA3", this.reads, date, time, o.commId));
    return lines;
  }

  private eventLines(): string[] {
    const lines = this.doors.map((d) => segment("EA1", "EGS", d.date, d.time));
    lines.push(segment("EA2", "EGS", this.doorReset, this.doorInit, null, 0));
    return lines;
  }

  /** The whole audit file as the machine would send it now. */
  auditFile(now: Date): string {
    return writeEvaDts(this.dataLines(now), { commId: this.opts.commId });
  }

  /** An events-only file, as a machine pushes when it opens a session by itself. */
  eventsFile(): string {
    return writeEvaDts([segment("ID1", this.opts.serial), ...this.eventLines()], {
      commId: this.opts.commId,
    });
  }
}
