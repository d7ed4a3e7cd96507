import { ctx } from "./selection.test-support.js";
import { transitionTable } from "./table.test-support.js";
import { rows } from "./vending.rows.test-support.js";

transitionTable("engine transitions (selection first): vending and settling", ctx, rows);
