/**
 * Plans against the emulator's subscriptions interface (seed 000), end to end over real HTTPS callbacks:
 * the fleet (Fastify with a self-signed certificate the emulator trusts) signs a member up, follows the
 * agreement, charges the month, bills and captures overage, refunds, suspends after a failed payment's grace
 * and resumes when paid; callbacks without the fleet's key, or replayed, change nothing; badge UIDs never
 * reach the database file or the logs. Clocks: the fleet's ManualClock and the emulator's clock move
 * together; only the HTTP round trips are waited for. Needs `openssl` (test certificates).
 * The fixture is in plans.test-support.ts; the steps, registered here in order, in plans.members and
 * plans.billing (.test-support.ts).
 */
import { describe } from "vitest";
import { hasOpenssl } from "../../emulator/testing/httpsReceiver.js";
import {
  dashboardRefundTest,
  manualOverageTest,
  monthFeeTest,
  overageTest,
} from "./plans.billing.test-support.js";
import {
  callbackAuthTest,
  noBadgeUidTest,
  signUpTest,
  suspensionTest,
} from "./plans.members.test-support.js";
import { usePlansFixture } from "./plans.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: fleet plans tests skipped");

describe.skipIf(skip)("fleet plans against the emulator (seed 000)", () => {
  const f = usePlansFixture();
  signUpTest(f);
  monthFeeTest(f);
  overageTest(f);
  dashboardRefundTest(f);
  callbackAuthTest(f);
  suspensionTest(f);
  manualOverageTest(f);
  noBadgeUidTest(f);
});
