/**
 * A duration in words for an alert's detail ("no heartbeat for 2 min 30 s", "clear for 3 s"): thresholds
 * are fractional minutes (`holdOffMinutes: 0.05`, `offline.minutes: 0.5`), so a detail never rounds a
 * sub-minute or fractional duration down to "0 min".
 */
export function durationWords(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}
