import type { ConfigSource } from '@switchboard/core';

/** What an operator needs when Slack refuses a token: the health detail and the log fields (never the value). */
export interface Refusal {
  detail: string;
  fields: { account: string; key: string; variable?: string; code: string; retryInMs: number };
}

/**
 * Words a refused token (`invalid_auth`, `token_revoked`, HTTP 401…): which account, which config
 * key, and the `${VAR}` the config read it from, so the operator knows what to fix.
 */
export function refusal(account: string, source: ConfigSource, code: string, retryInMs: number): Refusal {
  const variable = source.variables.length > 0 ? source.variables.join(', ') : undefined;
  const from = variable ? ` (set from \${${source.variables.join('}, ${')}})` : '';
  const detail = `account ${account}: Slack refused the token at ${source.key}${from}: ${code}; fix the token (it is tried again in ${Math.round(retryInMs / 1000)} s, or restart the gateway)`;
  return { detail, fields: { account, key: source.key, ...(variable ? { variable } : {}), code, retryInMs } };
}
