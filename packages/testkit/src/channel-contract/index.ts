export {
  acceptBeforeAck,
  assertNoTimersLeft,
  CONTRACT_POINTS,
  type ContractPoint,
  finalLedgeredOnce,
  neverThrows,
  redeliveryMakesOneTurn,
  resumeSkipsFinalsAndFixesDraft,
  steeredAcknowledgement,
  stopIdempotent,
  type TimerWatch,
  watchTimers,
  within,
} from './checks.js';
export type { ContractHarness, ContractRig, InjectedItem, PlatformOutput } from './harness.js';
export { checkContractPoint, runChannelContract, withContractRig } from './run.js';
