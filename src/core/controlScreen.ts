/** The answer of the control socket's `screen` command (src/daemon/screenCommand.ts), checked by the CLI. */
import * as z from "zod";

export const screenAnswerSchema = z.object({
  /** The display kind (`framebuffer`, `ssd1306`, `terminal`, ...). */
  display: z.string().max(32),
  /** The screen's kind (`idle`, `pay`, `vending`, ...), or null before the first screen. */
  screen: z.string().max(32).nullable(),
  /** The screen as text rows (the QR code as `[QR code: LINK]`). */
  text: z.array(z.string().max(400)).max(40),
  width: z.number().int().min(0).max(8192),
  height: z.number().int().min(0).max(8192),
  /** The picture as a base64 PNG, or null before the first screen. */
  png: z.string().max(60_000).nullable(),
});

export type ScreenAnswer = z.infer<typeof screenAnswerSchema>;
