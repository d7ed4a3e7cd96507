/**
 * The process logger (pino 10), in three layers of secret protection (reliability.md §5):
 * 1. `redact` censors known secret field paths with `[redacted]`, and a `formatters.log` walk censors the
 *    same field names deeper down;
 * 2. the `err` serializer drops request configs, headers and sockets that HTTP errors carry;
 * 3. a scrubbing destination replaces every registered secret VALUE anywhere in the serialized line,
 *    because redaction touches only structured fields, not message strings or error messages.
 * Components log through `logger.child({ component: "engine" })`; a component's own child names a component
 * again (the vmc driver under the peripherals), and each line carries exactly one `component`: the
 * innermost (see `oneComponent`).
 */
import pino from "pino";
import { REDACTED, SecretRegistry } from "./secrets.js";

/**
 * Field names whose values are secrets or credentials. Only secrets: a name that also means something
 * harmless is censored everywhere it appears (`pin` once hid every GPIO pin number). The console PIN is
 * kept as a hash (`pinHash`), which is secret too: a short PIN's hash falls to an offline search.
 */
const SECRET_FIELDS = [
  "clientSecret",
  "client_secret",
  "apiKey",
  "ApiKey",
  "merchantKey",
  "MerchantKey",
  "authorization",
  "Authorization",
  "access_token",
  "accessToken",
  "token",
  "password",
  "pinHash",
  "secret",
  "HMAC",
];

const SECRET_FIELD_SET: ReadonlySet<string> = new Set(SECRET_FIELDS);

/**
 * pino `redact` paths: each secret field at the top level and one level down (`*.clientSecret`), plus the
 * usual header locations. pino paths are exact and wildcards are slow (about 20 µs per line for these on
 * x86, 100 µs with two more levels), so deeper fields are censored by `censorSecretFields` instead.
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  "req.headers.authorization",
  "req.headers.Authorization",
  "headers.authorization",
  "headers.Authorization",
  'headers["proxy-authorization"]',
  'req.headers["proxy-authorization"]',
  "req.headers.cookie",
];

/** How deep `censorSecretFields` looks into plain objects and arrays. */
const CENSOR_DEPTH = 8;

/**
 * Returns a copy of plain objects and arrays with every secret-named field set to `[redacted]`, at any depth
 * up to 8 (beyond that, and for class instances such as errors, the value is returned as is).
 */
export function censorSecretFields(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth > CENSOR_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => censorSecretFields(v, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_FIELD_SET.has(key) ? REDACTED : censorSecretFields(v, depth + 1);
  }
  return out;
}

function censorRecord(obj: Record<string, unknown>): Record<string, unknown> {
  const out = censorSecretFields(obj);
  return isRecord(out) ? out : obj;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Keys an error may carry that hold request state (configs, headers, sockets): never logged. */
const DROPPED_ERROR_KEYS = new Set([
  "config",
  "request",
  "response",
  "req",
  "res",
  "headers",
  "options",
  "agent",
  "socket",
]);

export interface LoggerOptions {
  /** pino level: fatal | error | warn | info | debug | trace | silent. */
  level: string;
  /** Where lines go; default standard error (standard output may carry the terminal display). */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
  /**
   * Secret values to scrub from every line. Pass a `SecretRegistry` to add values learned later (the
   * bearer token) with `registry.addSecret(value)`.
   */
  secrets?: readonly string[] | SecretRegistry;
  /** Fields on every line, e.g. `{ unit: "vm-0001" }`; default none (no pid/hostname). */
  base?: Record<string, unknown>;
}

/** Creates the process logger. No module-level state: every call builds its own destination wrapper. */
export function createLogger(opts: LoggerOptions): pino.Logger {
  const registry =
    opts.secrets instanceof SecretRegistry ? opts.secrets : new SecretRegistry(opts.secrets ?? []);
  const target = opts.destination ?? pino.destination({ dest: 2, sync: true });
  const components = new WeakMap<object, string>();
  const logger = pino(
    {
      level: opts.level,
      base: opts.base ?? null,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      formatters: { log: censorRecord, bindings: censorRecord },
      serializers: { err: serializeError, error: serializeError },
      mixin: (_obj, _level, instance) => {
        const component = components.get(instance);
        return component === undefined ? {} : { component };
      },
    },
    scrubbingDestination(target, registry),
  );
  return oneComponent(logger, components);
}

/**
 * pino appends each child's bindings to its parent's as serialized text, so `child({ component })` under
 * a component logger wrote `"component":"peripherals","component":"gpio"`: a duplicate key that JSON
 * parsers resolve differently. Here `component` never becomes a binding: `child` (inherited by every
 * descendant, pino children are prototype-linked) records it per logger, the innermost wins, and the
 * `mixin` writes it once per line. A `component` given on a single log call still wins over it.
 */
function oneComponent(root: pino.Logger, components: WeakMap<object, string>): pino.Logger {
  // vendd defines no custom levels, so the child signature without them is the one in use.
  type Child = (this: pino.Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => pino.Logger;
  const makeChild: Child = root.child;
  const child: Child = function (bindings, options) {
    const { component, ...rest } = bindings;
    const made = makeChild.call(this, rest, options);
    const own = typeof component === "string" ? component : components.get(this);
    if (own !== undefined) components.set(made, own);
    return made;
  };
  // Defined, not assigned: pino's generic `child` type has no place for this narrower signature.
  Object.defineProperty(root, "child", { value: child, writable: true, configurable: true });
  return root;
}

/**
 * Wraps a destination so that every registered secret value is replaced before the line is written.
 * Exported for tests and for other streams that carry log-like text.
 */
export function scrubbingDestination(
  target: NodeJS.WritableStream | pino.DestinationStream,
  registry: SecretRegistry,
): pino.DestinationStream {
  return {
    write(line: string): void {
      target.write(registry.scrub(line));
    },
  };
}

/**
 * pino's standard error serializer, minus request configs, headers and sockets, with secret-named fields
 * censored (at any depth ≤ 4).
 */
export function serializeError(err: unknown): unknown {
  return stripRequestState(err instanceof Error ? pino.stdSerializers.err(err) : err, 0);
}

function stripRequestState(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth > 4) return "[truncated]";
  if (Array.isArray(value)) return value.map((v) => stripRequestState(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (DROPPED_ERROR_KEYS.has(key)) continue;
    out[key] = SECRET_FIELD_SET.has(key) ? REDACTED : stripRequestState(v, depth + 1);
  }
  return out;
}
