/**
 * Bounded real-time wait for network I/O (a callback reaching the fleet, a provider run finishing): polls
 * `check` every 20 ms until it returns a value, and throws naming `what` after `ms`.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
