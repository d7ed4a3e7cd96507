/** DEX audits (issue 36), as other features reach them: ingest stores each DEX read a unit sends. */
export { storeDexRead } from "./store.js";
