/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4, what prom-client writes and
 * node_exporter's textfile collector reads), for the metrics tests (issue 45): no kept parser is in
 * node_modules and `promtool` is not installed. It refuses what Prometheus would refuse: a bad metric or
 * label name, a bad escape, an unparsable value, a family's samples split apart or before its TYPE, a
 * repeated series, a TYPE given twice, a histogram whose buckets are not cumulative or whose `+Inf` bucket
 * is not its count.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

function fail(line: number, text: string, why: string): never {
  throw new Error(`metrics text line ${line}: ${why}: ${JSON.stringify(text)}`);
}

function parseValue(s: string, line: number, text: string): number {
  if (s === "+Inf" || s === "Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (s === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) fail(line, text, `not a number: ${s}`);
  return Number(s);
}

/** `{a="x",b="y"}` from position `i` of `text`: the labels and the position after `}`. */
function parseLabels(
  text: string,
  start: number,
  line: number,
): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (text[i] === "}") return { labels, end: i + 1 };
    const eq = text.indexOf("=", i);
    if (eq < 0) fail(line, text, "a label without =");
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) fail(line, text, `bad label name ${name}`);
    if (name in labels) fail(line, text, `label ${name} twice`);
    if (text[eq + 1] !== '"') fail(line, text, "a label value must be quoted");
    let value = "";
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) fail(line, text, "an unterminated label value");
      if (c === '"') break;
      if (c === "\\") {
        const e = text[j + 1];
        if (e === "\\") value += "\\";
        else if (e === '"') value += '"';
        else if (e === "n") value += "\n";
        else fail(line, text, `bad escape \\${e ?? ""}`);
        j += 2;
        continue;
      }
      if (c === "\n") fail(line, text, "a raw newline in a label value");
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") fail(line, text, "labels must be separated by ,");
  }
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct !== undefined) return direct;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f !== undefined && (f.type === "histogram" || (f.type === "summary" && suffix !== "_bucket")))
      return f;
  }
  return undefined;
}

/** Parses the whole text; throws naming the line of the first problem. */
export function parsePromText(text: string): Map<string, Family> {
  if (text !== "" && !text.endsWith("\n")) throw new Error("metrics text: the last line has no newline");
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: Family | null = null;
  const lines = text.split("\n");
  lines.pop();
  lines.forEach((raw, index) => {
    const n = index + 1;
    if (raw.trim() === "") return;
    if (raw.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(raw);
      if (m === null) return; // a plain comment
      const [, kind, name = "", rest = ""] = m;
      if (!METRIC_NAME.test(name)) fail(n, raw, `bad metric name ${name}`);
      if (closed.has(name)) fail(n, raw, `family ${name} continues after another family`);
      let f = families.get(name);
      if (kind === "TYPE") {
        if (!TYPES.has(rest as MetricType)) fail(n, raw, `unknown type ${rest}`);
        if (f !== undefined && f.samples.length > 0) fail(n, raw, "TYPE after the family's samples");
        if (f !== undefined && f.type !== "untyped") fail(n, raw, "TYPE given twice");
        if (f === undefined) {
          f = { name, type: rest as MetricType, help: null, samples: [] };
          families.set(name, f);
        } else f.type = rest as MetricType;
      } else {
        if (f?.help != null) fail(n, raw, "HELP given twice");
        if (f === undefined) {
          f = { name, type: "untyped", help: null, samples: [] };
          families.set(name, f);
        }
        f.help = rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
      }
      if (current !== null && current !== f) closed.add(current.name);
      current = f;
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) fail(n, raw, "no metric name");
    const name = raw.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) fail(n, raw, `bad metric name ${name}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (raw[i] === "{") ({ labels, end: i } = parseLabels(raw, i, n));
    const rest = raw.slice(i).trim().split(/ +/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === "")
      fail(n, raw, "a sample is a value and an optional timestamp");
    const value = parseValue(rest[0] ?? "", n, raw);
    if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1]))
      fail(n, raw, "a timestamp is integer milliseconds");
    let f = familyOf(name, families);
    if (f === undefined) {
      f = { name, type: "untyped", help: null, samples: [] };
      families.set(name, f);
    }
    if (closed.has(f.name)) fail(n, raw, `family ${f.name} continues after another family`);
    if (current !== null && current !== f) closed.add(current.name);
    current = f;
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) fail(n, raw, "the same series twice");
    seen.add(key);
    if (f.type === "histogram" && name.endsWith("_bucket") && labels.le === undefined)
      fail(n, raw, "a histogram bucket without le");
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** Buckets cumulative in increasing `le`, ending at `+Inf` equal to `_count`, for each label set. */
function checkHistogram(f: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const s of f.samples) {
    const { le: _le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, samples] of groups) {
    const buckets = samples.filter((s) => s.name === `${f.name}_bucket`);
    const count = samples.find((s) => s.name === `${f.name}_count`);
    if (samples.find((s) => s.name === `${f.name}_sum`) === undefined || count === undefined)
      throw new Error(`histogram ${f.name}${key}: no _sum or _count`);
    let le = Number.NEGATIVE_INFINITY;
    let previous = 0;
    for (const b of buckets) {
      const bound = b.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(b.labels.le);
      if (!(bound > le)) throw new Error(`histogram ${f.name}${key}: buckets not in increasing le`);
      if (b.value < previous) throw new Error(`histogram ${f.name}${key}: buckets not cumulative`);
      le = bound;
      previous = b.value;
    }
    if (le !== Number.POSITIVE_INFINITY || previous !== count.value)
      throw new Error(`histogram ${f.name}${key}: the +Inf bucket is not the count`);
  }
}

/** The value of `name` with exactly `labels`, or undefined. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
  return undefined;
}
