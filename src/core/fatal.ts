/**
 * The one fatal path of every `vendd` command (src/cli/main.ts): a command that fails prints its cause,
 * closes what it has open (each resource registered with `closeOnExit` while it is open) and the process
 * exits non-zero at once. Node would otherwise stay alive while any handle is open (a listening socket, a
 * database pool, a timer), and a service that failed to start would hang instead of being restarted.
 */

type Closer = () => unknown;

const closers = new Set<Closer>();

/** Registers `close` to run on the fatal path; returns the function that unregisters it. */
export function closeOnExit(close: Closer): () => void {
  closers.add(close);
  return () => {
    closers.delete(close);
  };
}

/** How long the fatal path waits for the registered closers before it exits anyway, ms. */
export const CLOSE_WAIT_MS = 1_000;

/** Runs every registered closer (most recent first), waiting at most `waitMs` for them all. */
export async function closeAll(waitMs = CLOSE_WAIT_MS): Promise<void> {
  const all = [...closers].reverse();
  closers.clear();
  const settled = Promise.allSettled(
    all.map(async (close) => {
      await close();
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
    timer.unref();
  });
  await Promise.race([settled, timeout]);
  if (timer !== undefined) clearTimeout(timer);
}

/** The message of whatever was thrown, one line. */
export function causeOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
