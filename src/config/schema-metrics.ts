/**
 * The unit's own metrics for node_exporter's textfile collector (issue 45, docs/operators.md "Metrics"):
 * where the file is written and how often. `textfile: null` (the default) writes none.
 */
import * as z from "zod";
import { intIn, nonEmpty } from "./rules.js";

export const metricsSchema = z
  .strictObject({
    /**
     * The file, such as /var/lib/prometheus/node-exporter/vendd.prom: node_exporter reads only names ending
     * in .prom. Null = no metrics file.
     */
    textfile: nonEmpty(4096)
      .refine((p) => p.startsWith("/"), "must be an absolute path")
      .refine(
        (p) => p.endsWith(".prom"),
        "must end in .prom (node_exporter's textfile collector reads only those)",
      )
      .nullable()
      .default(null),
    /** Seconds between writes. */
    intervalSeconds: intIn(5, 3600).default(30),
  })
  .prefault({});
