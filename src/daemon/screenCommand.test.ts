import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { checkinUri } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import { fakeFramebuffer } from "../../drivers/display/framebuffer.test-support.js";
import { recordingBus } from "../../drivers/display/oled.test-support.js";
import { decodeRgba } from "../../drivers/display/qr.test-support.js";
import { screenAnswerSchema } from "../core/controlScreen.js";
import type { ControlSession } from "./control.js";
import { screenCommand } from "./screenCommand.js";

const link = checkinUri("servicepos", "123456789012345");
const session = {} as ControlSession;
const answer = async (cmd: ReturnType<typeof screenCommand>) =>
  screenAnswerSchema.parse(await cmd.run({}, session));
const decodePng = (b64: string) => {
  const png = PNG.sync.read(Buffer.from(b64, "base64"));
  return decodeRgba(new Uint8ClampedArray(png.data), png.width, png.height);
};

describe("screen (control command)", () => {
  it("answers the framebuffer's last drawn screen as text and as a PNG that decodes to the link", async () => {
    const fb = fakeFramebuffer(320, 240, 16);
    const display = await createDisplay({ kind: "framebuffer", device: fb.device, sysfs: fb.sysfs });
    const cmd = screenCommand({ display });
    expect(cmd.public).toBe(true);
    expect(await answer(cmd)).toMatchObject({ display: "framebuffer", screen: null, png: null });
    display.show({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: link, item: 7 });
    const a = await answer(cmd);
    expect(a).toMatchObject({ display: "framebuffer", screen: "pay", width: 320, height: 240 });
    expect(a.text).toEqual(["Pay 12.50 DKK (item 7)", `[QR code: ${link}]`, "Scan with the app to pay"]);
    expect(decodePng(a.png ?? "")).toBe(link);
    display.show({ kind: "vending", amount: 1250, currency: "DKK" });
    expect((await answer(cmd)).text).toEqual(["Vending, please wait", "12.50 DKK"]);
    await display.close();
  });

  it("answers the OLED's picture at 128x64", async () => {
    const bus = recordingBus();
    const display = await createDisplay(
      { kind: "ssd1306", bus: 1, address: 60 },
      { openI2c: async () => bus },
    );
    display.show({ kind: "idle", checkinUri: link, message: "Check in with the app to shop" });
    await display.close();
    const a = await answer(screenCommand({ display }));
    expect(a).toMatchObject({ display: "ssd1306", screen: "idle", width: 128, height: 64 });
    expect(decodePng(a.png ?? "")).toBe(link);
  });

  it("draws a terminal display's screen at 240x240 for the PNG", async () => {
    const display = await createDisplay({ kind: "sim" });
    display.show({ kind: "outOfService", reason: "Door open" });
    const a = await answer(screenCommand({ display }));
    expect(a).toMatchObject({ display: "sim", screen: "outOfService", width: 240, height: 240 });
    expect(a.text).toEqual(["Out of service", "Door open"]);
  });
});
