/**
 * The parsed form of an EVA-DTS audit file (dex.md §5). Every money value is an integer in the file's own
 * units (`decimals` places implied, from ID401, default 2); `toMinor` converts it to the currency's minor
 * units. Counters the file leaves out are null, never 0: a missing count is not a count of zero.
 */

/** A since-initialisation / since-last-reset pair of value and count (VA1, CA2, DA2, TA2 layout). */
export interface ValueCounter {
  valueInit: number | null;
  countInit: number | null;
  valueReset: number | null;
  countReset: number | null;
}

/** Paid, test or free vends of one selection (PA2, PA3, PA4 layout: count first). */
export interface SelectionCounter {
  countInit: number | null;
  valueInit: number | null;
  countReset: number | null;
  valueReset: number | null;
}

/** One PA7 line: the sales of one selection through one payment device. */
export interface DeviceSales {
  /** `CA` cash, `DA` cashless 1, `DB` cashless 2, `TA` tokens, or what the file says. */
  device: string;
  priceList: string | null;
  price: number | null;
  countInit: number | null;
  valueInit: number | null;
  countReset: number | null;
  valueReset: number | null;
}

export interface Product {
  /** PA101: the selection id, as text ("11", "A3"). */
  selection: string;
  price: number | null;
  /** PA103: a name, or on some firmware an index. */
  name: string | null;
  notPresent: boolean;
  level: number | null;
  minLevel: number | null;
  paid: SelectionCounter | null;
  test: SelectionCounter | null;
  free: SelectionCounter | null;
  soldOut: { date: string | null; time: string | null; timesSelected: number | null } | null;
  byDevice: DeviceSales[];
}

export interface DeviceId {
  serial: string | null;
  model: string | null;
  software: string | null;
}

/** An EA1 line: one event occurrence. */
export interface EventOccurrence {
  code: string;
  date: string | null;
  time: string | null;
  durationMin: number | null;
}

/** An EA2 line: the counters of one event code. Repeated codes keep the last line (history lines). */
export interface EventCounter {
  code: string;
  countReset: number | null;
  countInit: number | null;
  active: boolean | null;
}

/** EA3: the audit reads the machine itself counts. */
export interface ReadHistory {
  readsWithResetInit: number | null;
  date: string | null;
  time: string | null;
  readerId: string | null;
  previousDate: string | null;
  previousTime: string | null;
  readsTotalInit: number | null;
  resetsInit: number | null;
}

/** What the envelope checks found; none of them rejects the file (dex.md §3 policy). */
export interface EnvelopeCheck {
  /** `ok` matched; `swapped` matched with its two bytes swapped (pre-6.0); `bad` mismatch; `absent` no G85. */
  g85: "ok" | "swapped" | "bad" | "absent";
  /** The CRC computed over ST..before G85, 4 hex digits, or null without ST. */
  g85Computed: string | null;
  /** SE01 as sent, and the segments counted ST..SE inclusive (with and without LS/LE lines). */
  seDeclared: number | null;
  seCounted: number;
  seCountedWithoutLists: number;
}

/** One segment as read: its id and trimmed, unescaped elements (element 1 at index 0). */
export interface Segment {
  id: string;
  elements: string[];
  line: number;
}

export interface EvaDtsReport {
  /** DXS01, the communication id of the sender, and DXS03 (version, e.g. `V0/6`). */
  commId: string | null;
  version: string | null;
  machine: {
    serial: string | null;
    model: string | null;
    buildStandard: string | null;
    location: string | null;
    asset: string | null;
  };
  /** ID4. `currency` is the ISO 4217 alpha code when the file names one (ID403, or ID402 with a leading 1). */
  decimals: number;
  currency: string | null;
  currencyNumeric: string | null;
  machineDate: string | null;
  machineTime: string | null;
  controlBoard: DeviceId | null;
  vends: { paid: ValueCounter | null; test: ValueCounter | null; free: ValueCounter | null };
  cash: {
    device: DeviceId | null;
    sales: ValueCounter | null;
    /** CA3 inserted since init: 05 total, 06 to box, 07 to tubes, 08 bills. */
    inInit: {
      total: number | null;
      toBox: number | null;
      toTubes: number | null;
      bills: number | null;
    } | null;
    /** CA4 dispensed: since reset and since init. */
    dispensedReset: number | null;
    dispensedInit: number | null;
  };
  cashless1: { device: DeviceId | null; sales: ValueCounter | null };
  cashless2: { device: DeviceId | null; sales: ValueCounter | null };
  tokens: ValueCounter | null;
  products: Product[];
  events: EventOccurrence[];
  eventCounters: EventCounter[];
  reads: ReadHistory | null;
  initialised: { date: string | null; time: string | null } | null;
  powerOutages: { countReset: number | null; countInit: number | null } | null;
  /** The ids of LS lists seen (`0100`, `0200`). */
  lists: string[];
  check: EnvelopeCheck;
  /** Every segment in order, known or not (vendor segments such as MA5 stay here). */
  segments: Segment[];
  /** What was odd but did not stop the parse, at most MAX_WARNINGS lines. */
  warnings: string[];
}
