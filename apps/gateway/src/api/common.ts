import { ROLES, type PermissionScope, type PermissionScopeKind, type Storage } from '@switchboard/core';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ControlApiDeps } from './deps.js';

/** `operator:<token name>`: who made a change through the control API, as the audit log names it. */
export function actorOf(req: FastifyRequest): string {
  return `operator:${req.operator?.name ?? 'unknown'}`;
}

/** Appends one audit entry for a change made through the control API (the token id goes in the detail). */
export async function auditChange(
  storage: Storage,
  req: FastifyRequest,
  action: string,
  target: string | null,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await storage.audit.append({ actor: actorOf(req), action, target, detail: { ...detail, tokenId: req.operator?.id ?? null } });
}

/** A path `:id` of a stored record. */
export const idParam = z.strictObject({ id: z.string().min(1).max(64) });

/** A principal's or token's name. */
export const nameSchema = z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'use 1–64 letters, digits, ".", "_", "@" or "-"');

/** A role. */
export const roleSchema = z.enum(['owner', 'admin', 'member', 'guest']);

/** Paging of list routes. */
export const paging = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

const SCOPE_KINDS = ['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session'] as const satisfies readonly PermissionScopeKind[];

/** A permission scope in a request body: `{ kind, id? }` (the gateway scope has no id; every other kind needs one). */
export const scopeSchema = z.strictObject({ kind: z.enum(SCOPE_KINDS), id: z.string().min(1).max(300).optional() });

/**
 * Checks that a scope names something that exists: a configured agent, a channel account, a role,
 * a principal or a session; a conversation id must look like `<type>:<account>:<id>`. Returns the
 * problem (naming the field), or null.
 */
export async function scopeProblem(deps: ControlApiDeps, scope: PermissionScope, field = 'scope'): Promise<string | null> {
  const { kind, id } = scope;
  if (kind === 'gateway') return id === undefined ? null : `${field}.id: the gateway scope takes no id`;
  if (id === undefined) return `${field}.id: required for a ${kind} scope`;
  switch (kind) {
    case 'agent':
      return Object.hasOwn(deps.agentTools, id) ? null : `${field}.id: no agent ${JSON.stringify(id)} (configured: ${Object.keys(deps.agentTools).join(', ')})`;
    case 'channel':
      return deps.channels.some((c) => c.id === id) ? null : `${field}.id: no channel ${JSON.stringify(id)}`;
    case 'role':
      return (ROLES as readonly string[]).includes(id) ? null : `${field}.id: no role ${JSON.stringify(id)} (roles: ${ROLES.join(', ')})`;
    case 'principal':
      return (await deps.storage.principals.get(id)) ? null : `${field}.id: no principal ${JSON.stringify(id)}`;
    case 'session':
      return (await deps.storage.sessions.get(id)) ? null : `${field}.id: no session ${JSON.stringify(id)}`;
    case 'conversation':
      return /^[a-z]+:[A-Za-z0-9_-]{1,64}:\S+$/.test(id) ? null : `${field}.id: a conversation id looks like <type>:<account>:<id>`;
  }
}

/** The scope as the API shows it. */
export const scopeView = (kind: PermissionScopeKind, id: string | null) => (id === null ? { kind } : { kind, id });
