/** Stable error codes the gateway's packages throw (`SWB_E_*`). */
export const SwbErrorCode = {
  ShuttingDown: 'SWB_E_SHUTTING_DOWN',
  UnknownSender: 'SWB_E_UNKNOWN_SENDER',
  Config: 'SWB_E_CONFIG',
} as const;
