/** Exactly-once ingest of the units' events, as the unit API calls it. */
export { claimAndIngest, type IngestResult, ingestBatch } from "./store.js";
