/**
 * SIGINT and SIGTERM for `vendd demo` (what `npm start` runs), which finishes the vend in progress on a
 * first Ctrl-C. One listener is installed from main.ts's first line and stays until the command ends: a
 * Ctrl-C while the demo's modules load is held and handed to the demo's handler once it exists, and no
 * moment is left without a listener (Node would then end the process, or drop a signal it had queued).
 */
type Handler = (signal: NodeJS.Signals) => void;

const held: NodeJS.Signals[] = [];
let handler: Handler | null = null;
let installed = false;

const dispatch = (signal: NodeJS.Signals): void => {
  if (handler === null) held.push(signal);
  else handler(signal);
};

/** From now on SIGINT and SIGTERM are held (or handed to the handler) instead of ending the process. */
export function holdInterrupts(): void {
  if (installed) return;
  installed = true;
  process.on("SIGINT", dispatch);
  process.on("SIGTERM", dispatch);
}

/**
 * Hands every held signal, then each new one, to `h`; returns the function that ends it (and removes the
 * listener, so that a later signal has Node's default effect again).
 */
export function handleInterrupts(h: Handler): () => void {
  holdInterrupts();
  handler = h;
  for (const signal of held.splice(0)) h(signal);
  return () => {
    handler = null;
    installed = false;
    process.off("SIGINT", dispatch);
    process.off("SIGTERM", dispatch);
  };
}
