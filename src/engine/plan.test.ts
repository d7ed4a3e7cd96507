import { rows } from "./plan.rows.test-support.js";
import { ctx } from "./selection.test-support.js";
import { transitionTable } from "./table.test-support.js";

transitionTable("engine transitions (selection first): member plan vends", ctx, rows);
