import { CANARY_ANTHROPIC_KEY } from './canaries.js';
import { deepMerge } from './deep-merge.js';

/** A gateway config object as JSON (the gateway validates it; the harness only writes it). */
export type GatewayConfig = Record<string, unknown>;

/**
 * The base test config: loopback, port 0, the given data dir, the fake model API with the
 * planted canary key, one default agent and one WebSocket account allowing `https://app.example`.
 */
export function baseTestConfig(dataDir: string, modelUrl?: string): GatewayConfig {
  return {
    gateway: { host: '127.0.0.1', port: 0, dataDir },
    log: { level: 'info' },
    model: { name: 'claude-test', baseUrl: modelUrl, apiKey: CANARY_ANTHROPIC_KEY, maxTokens: 1024 },
    agents: { default: { systemPrompt: 'You are a test assistant.' } },
    channels: { websocket: { accounts: { default: { allowedOrigins: ['https://app.example'] } } } },
  };
}

/** `baseTestConfig` with `override` deep-merged over it (see `deepMerge`). */
export function buildTestConfig(dataDir: string, modelUrl: string | undefined, override?: Record<string, unknown>): GatewayConfig {
  return deepMerge(baseTestConfig(dataDir, modelUrl), override);
}
