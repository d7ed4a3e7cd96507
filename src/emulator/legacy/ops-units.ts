import { LegacyFault, optStr, str, unitId } from "./fields.js";
import { location, type Operation, POS_ID_MAX, posOf } from "./ops.js";
import { posListItem } from "./views.js";

/** Registration and unit operations (seed "Older interface: operation requests and responses"; pos-legacy §5.1). */

const NAME_MAX = 100;

const registerPoS: Operation = (m, f) => {
  location(m, f, 10);
  const name = str(f, "Name", { max: NAME_MAX });
  const requested = optStr(f, "PoSId", { max: POS_ID_MAX, empty: true });
  // Seed: "PoSId optional (empty: the response carries a generated one)"; it must be unique.
  const posId = requested === undefined || requested === "" ? m.newPosId() : requested;
  if (m.poses.has(posId)) throw new LegacyFault(10, "Missing or invalid parameters: PoSId is not unique");
  m.poses.set(posId, { posId, name, unitId: null, payment: null, reservationOrderId: null, checkin: null });
  return { PoSId: posId };
};

const updateRegisteredPoSName: Operation = (m, f) => {
  const name = str(f, "Name", { max: NAME_MAX });
  posOf(m, f, 10).name = name;
  return {};
};

const unRegisterPoS: Operation = (m, f) => {
  const p = posOf(m, f, 30);
  m.cancelActive(p);
  m.poses.delete(p.posId);
  return {};
};

/**
 * Seed rule: "any existing payment for the unit is cancelled; if unit A is already assigned and B is
 * assigned, payments of both units are cancelled". Re-assigning the same unit changes nothing.
 */
const assignPoSUnitIdToPos: Operation = (m, f) => {
  const unit = unitId(f);
  const p = posOf(m, f, 10);
  if (p.unitId === unit) return {};
  const holder = m.posByUnit(unit);
  if (holder) {
    m.settlePos(holder);
    m.cancelActive(holder);
    holder.unitId = null;
    holder.checkin = null;
  }
  if (p.unitId !== null) m.cancelActive(p);
  p.unitId = unit;
  p.checkin = null;
  return {};
};

const unAssignPoSUnitIdToPoS: Operation = (m, f) => {
  const unit = unitId(f);
  const p = posOf(m, f, 30);
  if (p.unitId !== unit) throw new LegacyFault(30, "The PoSUnitId is not assigned to this PoSId");
  p.unitId = null;
  p.checkin = null;
  return {};
};

const readPoSAssignPoSUnitId: Operation = (m, f) => ({ PoSUnitId: posOf(m, f, 30).unitId ?? "" });

const readPoSUnitAssignedPoSId: Operation = (m, f) => {
  location(m, f, 30);
  const p = m.posByUnit(unitId(f));
  if (!p) throw new LegacyFault(30, "The PoSUnitId is not assigned to any PoS");
  return { PoSId: p.posId };
};

const getUniquePoSId: Operation = (m, f) => {
  if (str(f, "MerchantId") !== m.seed.merchantId) throw new LegacyFault(20, "The MerchantId does not exist");
  return { PoSId: m.newPosId() };
};

const getPosList: Operation = (m, f) => {
  location(m, f, 10);
  const poses = [...m.poses.values()].map((p) => {
    m.settlePos(p);
    return posListItem(p);
  });
  return { Poses: poses };
};

/** Seed: "An API key is needed for the location list call, which can be made only by the same merchant." */
const getLocationList: Operation = (m, f) => {
  if (str(f, "MerchantId") !== m.seed.merchantId) {
    throw new LegacyFault(10, "Missing or invalid parameters: MerchantId is not the API key's merchant");
  }
  const location = { LocationId: m.seed.locationId, Name: m.seed.locationName, NotifyUrl: null };
  return { Location: [{ ...location, NumberOfPoS: m.poses.size }] };
};

export const UNIT_OPERATIONS: Readonly<Record<string, Operation>> = {
  RegisterPoS: registerPoS,
  UpdateRegisteredPoSName: updateRegisteredPoSName,
  UnRegisterPoS: unRegisterPoS,
  AssignPoSUnitIdToPos: assignPoSUnitIdToPos,
  UnAssignPoSUnitIdToPoS: unAssignPoSUnitIdToPoS,
  ReadPoSAssignPoSUnitId: readPoSAssignPoSUnitId,
  ReadPoSUnitAssignedPoSId: readPoSUnitAssignedPoSId,
  GetUniquePoSId: getUniquePoSId,
  GetPosList: getPosList,
  GetLocationList: getLocationList,
};
