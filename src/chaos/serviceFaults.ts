import type { FaultRule } from "../emulator/index.js";

/**
 * The payment-mutation and status routes of each interface (pos-v10 §5-§8; pos-legacy operations), where
 * chaos arms the emulator's faults.
 */
const ROUTES: Record<"v10" | "legacy", readonly { method: string; path: string }[]> = {
  v10: [
    { method: "POST", path: "/v10/payments" },
    { method: "POST", path: "/v10/payments/*/capture" },
    { method: "POST", path: "/v10/payments/*/cancel" },
    { method: "GET", path: "/v10/payments/*" },
  ],
  legacy: [
    { method: "POST", path: "/API/*/ReservationStart" },
    { method: "POST", path: "/API/*/ReservationCapture" },
    { method: "POST", path: "/API/*/ReservationCancel" },
    { method: "POST", path: "/API/*/GetReservationStatus" },
  ],
};

/** Faults that leave the request applied but the answer lost or failed (reliability.md §2.3), or late. */
const KINDS: readonly { fault: FaultRule["fault"]; applied?: boolean; delayMs?: number }[] = [
  { fault: "reset", applied: true },
  { fault: "lost", applied: true },
  { fault: "500", applied: true },
  { fault: "delay", delayMs: 300 },
];

/** One seeded fault rule (count 1) on one of the driver's payment routes. */
export function pickFault(driver: "v10" | "legacy", random: () => number): FaultRule {
  const routes = ROUTES[driver];
  const route = routes[Math.floor(random() * routes.length)] ?? routes[0];
  const kind = KINDS[Math.floor(random() * KINDS.length)] ?? { fault: "500" };
  return { method: route?.method ?? "POST", path: route?.path ?? "/v10/payments", ...kind, count: 1 };
}
