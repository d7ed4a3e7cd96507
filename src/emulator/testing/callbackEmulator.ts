/**
 * An emulator whose HTTPS callbacks go to a test receiver (the invoices and online-payment HTTP tests): the
 * receiver starts first, the emulator trusts its certificate (`callbackCa`, loopback ports allowed) and runs
 * on a frozen clock from `startTime`; `close` stops both.
 */
import { type Emulator, type EmulatorOptions, startEmulator } from "../index.js";
import { type HttpsReceiver, startHttpsReceiver } from "./httpsReceiver.js";

export interface CallbackEmulator {
  emu: Emulator;
  rx: HttpsReceiver;
  close(): Promise<void>;
}

/** Starts the receiver, then the emulator with `options` added (e.g. a seed). */
export async function startCallbackEmulator(
  startTime: number,
  options: EmulatorOptions = {},
): Promise<CallbackEmulator> {
  const rx = await startHttpsReceiver();
  const emu = await startEmulator({
    startTime,
    timeSource: () => 0,
    callbackCa: rx.ca,
    callbackAllowLoopbackPorts: true,
    ...options,
  });
  return {
    emu,
    rx,
    close: async () => {
      await emu.close();
      await rx.close();
    },
  };
}
