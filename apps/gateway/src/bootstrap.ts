import { writeFileSync, renameSync } from 'node:fs';
import { SCOPES, type Role, type Scope, type Storage } from '@switchboard/core';
import { credentialsPath } from './credentials-file.js';
import { createToken } from './tokens.js';

/** Writes a file readable only by this user, atomically. */
export function writePrivateFile(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Creates a client token for a principal (creating the principal if new) and links its `ws:` identity. */
export async function createClientToken(
  storage: Storage,
  principalName: string,
  role: Role,
  tokenName = `${principalName}-client`,
  meta: { expiresAt?: Date | null; createdBy?: string | null } = {},
): Promise<{ secret: string; principalId: string; tokenId: string; createdPrincipal: boolean }> {
  let principal = await storage.principals.byName(principalName);
  const createdPrincipal = !principal;
  if (!principal) principal = await storage.principals.create({ name: principalName, role });
  const { secret, record } = await createToken(storage, {
    kind: 'client',
    name: tokenName,
    principalId: principal.id,
    scopes: [],
    createdBy: meta.createdBy ?? 'bootstrap',
    expiresAt: meta.expiresAt ?? null,
  });
  await storage.principals.linkIdentity(principal.id, 'ws', record.id);
  return { secret, principalId: principal.id, tokenId: record.id, createdPrincipal };
}

/** Creates an operator token with the given scopes. */
export async function createOperatorToken(
  storage: Storage,
  name: string,
  scopes: Scope[],
  meta: { expiresAt?: Date | null; createdBy?: string | null } = {},
): Promise<{ secret: string; tokenId: string }> {
  const { secret, record } = await createToken(storage, {
    kind: 'operator',
    name,
    principalId: null,
    scopes,
    createdBy: meta.createdBy ?? 'bootstrap',
    expiresAt: meta.expiresAt ?? null,
  });
  return { secret, tokenId: record.id };
}

/**
 * On the first start (no principals yet): an owner, a client token for it and an operator token
 * with every scope, written to `<dataDir>/credentials.json` (mode 0600). Returns the file's path, or
 * null when the database already had principals.
 */
export async function bootstrapCredentials(storage: Storage, dataDir: string): Promise<string | null> {
  if ((await storage.principals.count()) > 0) return null;
  const client = await createClientToken(storage, 'owner', 'owner', 'owner-client');
  const operator = await createOperatorToken(storage, 'bootstrap-operator', [...SCOPES]);
  const file = credentialsPath(dataDir);
  writePrivateFile(
    file,
    `${JSON.stringify({ principal: 'owner', principalId: client.principalId, clientToken: client.secret, operatorToken: operator.secret }, null, 2)}\n`,
  );
  return file;
}
