/** Valid raw configs for tests: fresh objects each call, so a test may mutate its copy. */
import { ConfigError, type ConfigIssue, parseConfig } from "./load.js";
import { isRecord } from "./rules.js";

/** A minimal valid V10 config (raw, as a YAML file would give it). */
export function rawV10(): Record<string, unknown> & { payment: Record<string, unknown> } {
  return {
    unit: { id: "vm-0001", name: "Vending 1" },
    payment: {
      driver: "v10",
      v10: {
        baseUrl: "http://127.0.0.1:8080",
        tokenUrl: "http://127.0.0.1:8080/integrator-authentication/connect/token",
        clientId: "vendd-test",
        merchantVat: "DK12345678",
        merchantBrandId: "POSDK12345",
        merchantLocationId: "10001",
      },
    },
  };
}

/** A minimal valid config for the older interface. */
export function rawLegacy(): Record<string, unknown> & { payment: Record<string, unknown> } {
  return {
    unit: { id: "vm-0002", name: "Vending 2" },
    payment: {
      driver: "legacy",
      legacy: {
        baseUrl: "http://127.0.0.1:8081",
        merchantId: "POSDK99999",
        locationId: "88888",
        posId: "vending-2",
        posUnitId: "123456789012345",
      },
    },
  };
}

export const V10_ENV = { VENDD_V10_CLIENT_SECRET: "test-client-secret" };
export const LEGACY_ENV = {
  VENDD_LEGACY_API_KEY: "test-api-key",
  VENDD_LEGACY_MERCHANT_KEY: "test-merchant-key",
};

/** The issues `parseConfig` throws for this input (fails the test when it does not throw). */
export function issuesOf(raw: unknown, secretsRaw: unknown = undefined, env: NodeJS.ProcessEnv = V10_ENV) {
  try {
    parseConfig(raw, secretsRaw, env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  throw new Error("expected a ConfigError");
}

/** The paths of `issues`, for exact assertions. */
export function pathsOf(issues: readonly ConfigIssue[]): string[] {
  return issues.map((i) => i.path);
}

/** Sets `obj.a.b.c = value` along an existing path (test mutation helper). */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  const last = parts.pop();
  if (last === undefined) throw new Error("empty path");
  let cur: Record<string, unknown> = obj;
  for (const p of parts) {
    const next = cur[p];
    if (!isRecord(next)) throw new Error(`no object at ${p}`);
    cur = next;
  }
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}
