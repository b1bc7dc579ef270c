export * from './anthropic-cache-rules.js';
export * from './anthropic-validate.js';
export * from './anthropic-validate-count.js';
export * from './anthropic-wire.js';
export * from './canaries.js';
export * from './canary-scan.js';
export * from './child-output.js';
export * from './deep-merge.js';
export * from './fake-anthropic-types.js';
export * from './fake-anthropic.js';
export * from './fake-anthropic-summary.js';
export * from './fake-anthropic-classifier.js';
export * from './fake-prompt-cache.js';
export * from './gateway-client.js';
export * from './gateway-config.js';
export * from './gateway-harness.js';
export * from './run-log.js';
export * from './scripted-message.js';
export * from './slack/index.js';
export { type MultipartBody, type MultipartFile, multipartBoundary, parseMultipart } from './multipart.js';
export * from './telegram/index.js';
export * from './ws-client.js';
export * from './mcp/index.js';
export * from './webhook/index.js';
export * from './search/index.js';
export * from './regex-fixtures.js';
export * from './unreachable.js';
export * from './no-egress.js';
export * from './channel-contract/index.js';
export { fakeChannelContext } from './fake-channel-context.js';
export { FakeChannelEnv, type FakeChannelEnvOptions } from './fake-channel-env.js';
export {
  type LedgerWrite,
  type LiveTurn,
  type RenderOutcome,
  type ServiceRequest,
  type StartedTurn,
  Timeline,
  type TimelineEvent,
} from './fake-channel-records.js';
export * from './scripted-model.js';
export * from './counting-model.js';
export { hostileThrownValues } from './hostile-values.js';
export * from './postgres.js';
export * from './replicas.js';
export * from './round-robin-proxy.js';
