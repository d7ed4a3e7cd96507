/** The MDB cashless adapter line-protocol driver (vending-mdb §2) behind `VendController`. */
export { AdapterController, createAdapterController } from "./controller.js";
export { createCashlessDialect } from "./dialect.js";
export { LineSplitter } from "./lineSplitter.js";
export { step } from "./machine.js";
export type { DeviceMsg, HostCmd, LineDialect, ReaderConfig } from "./messages.js";
export type { AdapterControllerOptions } from "./options.js";
export { initialState, type MachineInput, type MachineState, type Reader, type Step } from "./state.js";
