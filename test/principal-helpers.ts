import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { api, type GatewayProcess } from '@switchboard/testkit';

/** Creates a principal with `role` through the control API and links `<channelType>:<externalId>` (default: the name) to it; returns its id. */
export async function linkedPrincipal(gw: GatewayProcess, name: string, role: string, channelType = 'webhook', externalId = name): Promise<string> {
  const { operatorToken } = gw.credentials();
  const created = await api(gw, 'POST', '/api/v1/principals', { token: operatorToken, body: { name, role } });
  expect(created.status).toBe(201);
  const id = created.json.principal.id as string;
  const linked = await api(gw, 'POST', `/api/v1/principals/${id}/identities`, { token: operatorToken, body: { channelType, externalId } });
  expect(linked.status).toBe(201);
  return id;
}

/** Every path under the gateway's workspaces whose last segment is `name` (wherever a workspace lives). */
export function workspaceFiles(gw: GatewayProcess, name: string): string[] {
  const walk = (dir: string): string[] => {
    if (!existsSync(dir)) return [];
    return readdirSync(dir).flatMap((entry) => {
      const p = join(dir, entry);
      return [...(entry === name ? [p] : []), ...(statSync(p).isDirectory() ? walk(p) : [])];
    });
  };
  return walk(join(gw.dataDir, 'workspaces'));
}
