import { EXIT_UNAVAILABLE, operatorToken, type CliOutcome } from './cli-admin.js';
import { apiRequest, runningGateway } from './cli-remote.js';

/**
 * `switchboard status`: what the running gateway is doing, from its control API — channels and
 * their health, turns now and today, pending approvals and pairing requests, token use today
 * (00:00 UTC). A section the token's scopes do not cover shows `{ error }` instead.
 */
export async function statusCommand(dataDir: string, tokenFlag: string | undefined, env: NodeJS.ProcessEnv): Promise<CliOutcome> {
  const gw = await runningGateway(dataDir);
  if (!gw.running)
    return {
      code: EXIT_UNAVAILABLE,
      stderr: `switchboard: no gateway is running on ${dataDir} (nothing holds its instance lock); start it with: switchboard start\n`,
    };
  if (!gw.url)
    return {
      code: EXIT_UNAVAILABLE,
      stderr: `switchboard: a gateway holds ${dataDir} but does not listen yet (starting or stopping): try again in a moment\n`,
    };
  const token = operatorToken(dataDir, tokenFlag, env);
  if (!token) return { code: 2, stderr: 'switchboard: an operator token with the "read" scope is needed: --token <secret> or SWITCHBOARD_TOKEN\n' };
  const url = gw.url;
  const [channels, turns, approvals, pairing] = await Promise.all([
    apiRequest<{ channels: Array<{ id: string; type: string; account: string; health: Record<string, unknown> }> }>(url, token, 'GET', '/channels'),
    apiRequest<{ activeTurns: unknown; turns: unknown; since: unknown; usage: unknown }>(url, token, 'GET', '/stats/turns'),
    apiRequest<{ approvals: unknown[] }>(url, token, 'GET', '/approvals?status=pending&limit=500'),
    apiRequest<{ requests: unknown[] }>(url, token, 'GET', '/pairing?status=pending'),
  ]);
  const all = [channels, turns, approvals, pairing];
  if (all.some((a) => a.status === 401)) return { code: 1, stderr: `switchboard: ${all.find((a) => a.status === 401)!.message}\n` };
  const err = (a: { message: string }) => ({ error: a.message });
  const out = {
    gateway: url,
    channels: channels.ok
      ? channels.json.channels.map((c) => ({
          id: c.id,
          type: c.type,
          account: c.account,
          ...c.health,
        }))
      : err(channels),
    turns: turns.ok ? { active: turns.json.activeTurns, today: turns.json.turns } : err(turns),
    approvals: approvals.ok ? { pending: approvals.json.approvals.length } : err(approvals),
    pairing: pairing.ok ? { pending: pairing.json.requests.length } : err(pairing),
    usage: turns.ok ? { since: turns.json.since, today: turns.json.usage } : err(turns),
  };
  return { code: 0, stdout: `${JSON.stringify(out, null, 2)}\n` };
}
