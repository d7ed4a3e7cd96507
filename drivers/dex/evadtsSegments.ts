/**
 * What each known EVA-DTS segment means (dex.md §5 field tables), applied to the report being built.
 * Unknown and vendor segments (MA5, PP1, LA1, SA2…) are kept in `segments` only.
 */
import {
  currencyOf,
  deviceId,
  type Elements,
  selectionCounter,
  valueCounter,
  type Warn,
} from "./evadtsFields.js";
import type { EvaDtsReport, Product } from "./evadtsTypes.js";

/** The parse state a segment may need beyond the report: the product PA2–PA7 lines belong to. */
export interface SegmentState {
  product: Product | null;
  /** EA1 lines seen, to drop exact repeats (some firmware repeats its event history). */
  eventKeys: Set<string>;
  /** Reports something odd (bounded by the parser). */
  warn: Warn;
}

export function emptyReport(): EvaDtsReport {
  return {
    commId: null,
    version: null,
    machine: { serial: null, model: null, buildStandard: null, location: null, asset: null },
    decimals: 2,
    currency: null,
    currencyNumeric: null,
    machineDate: null,
    machineTime: null,
    controlBoard: null,
    vends: { paid: null, test: null, free: null },
    cash: { device: null, sales: null, inInit: null, dispensedReset: null, dispensedInit: null },
    cashless1: { device: null, sales: null },
    cashless2: { device: null, sales: null },
    tokens: null,
    products: [],
    events: [],
    eventCounters: [],
    reads: null,
    initialised: null,
    powerOutages: null,
    lists: [],
    check: { g85: "absent", g85Computed: null, seDeclared: null, seCounted: 0, seCountedWithoutLists: 0 },
    segments: [],
    warnings: [],
  };
}

function productFor(r: EvaDtsReport, s: SegmentState, selection: string | null): Product | null {
  if (selection === null) return s.product;
  if (s.product?.selection === selection) return s.product;
  const found = r.products.find((p) => p.selection === selection);
  if (found) return found;
  const made = newProduct(selection);
  r.products.push(made);
  return made;
}

function newProduct(selection: string): Product {
  return {
    selection,
    price: null,
    name: null,
    notPresent: false,
    level: null,
    minLevel: null,
    paid: null,
    test: null,
    free: null,
    soldOut: null,
    byDevice: [],
  };
}

function applyIdentity(r: EvaDtsReport, e: Elements, s: SegmentState): boolean {
  switch (e.id) {
    case "DXS":
      r.commId ??= e.text(1);
      r.version ??= e.text(3);
      return true;
    case "ID1":
      r.machine = {
        serial: e.text(1),
        model: e.text(2),
        buildStandard: e.text(3),
        location: e.text(4),
        asset: e.text(6),
      };
      return true;
    case "ID4": {
      const d = e.int(1);
      if (d !== null && d >= 0 && d <= 4) r.decimals = d;
      else if (d !== null) s.warn(`ID401 ${d} decimal places is out of range; 2 assumed`);
      r.currencyNumeric = e.text(2);
      r.currency = currencyOf(e.text(2), e.text(3));
      return true;
    }
    case "ID5":
      r.machineDate = e.text(1);
      r.machineTime = e.text(2);
      return true;
    case "CB1":
      r.controlBoard = deviceId(e);
      return true;
    default:
      return false;
  }
}

function applyMoney(r: EvaDtsReport, e: Elements): boolean {
  switch (e.id) {
    case "VA1":
      r.vends.paid = valueCounter(e);
      return true;
    case "VA2":
      r.vends.test = valueCounter(e);
      return true;
    case "VA3":
      r.vends.free = valueCounter(e);
      return true;
    case "CA1":
      r.cash.device = deviceId(e);
      return true;
    case "CA2":
      r.cash.sales = valueCounter(e);
      return true;
    case "CA3":
      r.cash.inInit = { total: e.int(5), toBox: e.int(6), toTubes: e.int(7), bills: e.int(8) };
      return true;
    case "CA4":
      r.cash.dispensedReset = e.int(1);
      r.cash.dispensedInit = e.int(3);
      return true;
    case "DA1":
      r.cashless1.device = deviceId(e);
      return true;
    case "DA2":
      r.cashless1.sales = valueCounter(e);
      return true;
    case "DB1":
      r.cashless2.device = deviceId(e);
      return true;
    case "DB2":
      r.cashless2.sales = valueCounter(e);
      return true;
    case "TA2":
      r.tokens = valueCounter(e);
      return true;
    default:
      return false;
  }
}

function applyProduct(r: EvaDtsReport, e: Elements, s: SegmentState): boolean {
  if (e.id === "PA1") {
    const selection = e.text(1);
    if (selection === null) {
      s.warn(`PA1 without a selection id; its PA lines are ignored`);
      s.product = null;
      return true;
    }
    const p = productFor(r, s, selection);
    if (!p) return true;
    p.price = e.int(2);
    p.name = e.text(3);
    p.notPresent = e.int(7) === 1;
    p.level = e.int(8);
    p.minLevel = e.int(9);
    s.product = p;
    return true;
  }
  if (!/^PA[2-7]$/.test(e.id)) return false;
  const p = e.id === "PA7" ? productFor(r, s, e.text(1)) : s.product;
  if (!p) {
    s.warn(`${e.id} before any PA1; ignored`);
    return true;
  }
  if (e.id === "PA2") p.paid = selectionCounter(e);
  else if (e.id === "PA3") p.test = selectionCounter(e);
  else if (e.id === "PA4") p.free = selectionCounter(e);
  else if (e.id === "PA5") p.soldOut = { date: e.text(1), time: e.text(2), timesSelected: e.int(3) };
  else if (e.id === "PA7") {
    p.byDevice.push({
      device: e.text(2) ?? "?",
      priceList: e.text(3),
      price: e.int(4),
      countInit: e.int(5),
      valueInit: e.int(6),
      countReset: e.int(7),
      valueReset: e.int(8),
    });
  }
  return true;
}

function applyEvent(r: EvaDtsReport, e: Elements, s: SegmentState): boolean {
  switch (e.id) {
    case "EA1": {
      const code = e.text(1);
      if (code === null) return true;
      const ev = { code, date: e.text(2), time: e.text(3), durationMin: e.int(4) };
      const key = `${ev.code}|${ev.date}|${ev.time}`;
      if (!s.eventKeys.has(key)) {
        s.eventKeys.add(key);
        r.events.push(ev);
      }
      return true;
    }
    case "EA2": {
      const code = e.text(1);
      if (code === null) return true;
      const counter = { code, countReset: e.int(2), countInit: e.int(3), active: e.flag(5) };
      const i = r.eventCounters.findIndex((c) => c.code === code);
      if (i >= 0) r.eventCounters[i] = counter;
      else r.eventCounters.push(counter);
      return true;
    }
    case "EA3":
      r.reads = {
        readsWithResetInit: e.int(1),
        date: e.text(2),
        time: e.text(3),
        readerId: e.text(4),
        previousDate: e.text(5),
        previousTime: e.text(6),
        readsTotalInit: e.int(9),
        resetsInit: e.int(10),
      };
      return true;
    case "EA4":
      r.initialised = { date: e.text(1), time: e.text(2) };
      return true;
    case "EA7":
      r.powerOutages = { countReset: e.int(1), countInit: e.int(2) };
      return true;
    default:
      return false;
  }
}

/** Applies one segment; returns false when the segment is not one this parser reads (kept raw). */
export function applySegment(r: EvaDtsReport, e: Elements, s: SegmentState): boolean {
  if (e.id === "LS") {
    const id = e.text(1);
    if (id !== null && r.lists.length < 100 && !r.lists.includes(id)) r.lists.push(id);
    return true;
  }
  return applyIdentity(r, e, s) || applyMoney(r, e) || applyProduct(r, e, s) || applyEvent(r, e, s);
}
