/** Units, as the dashboard reaches them: a manager's enrolment decisions (approve, revoke). */
export { approveUnit, type DecisionResult, revokeUnit } from "./decisions.js";
