import { join } from 'node:path';
import { parseDuration, ROLES, SCOPES, type Role, type Scope, type Storage } from '@switchboard/core';
import { personalDataOf } from './wiring/personal-data.js';
import { principalService, principalView } from './api/principal-service.js';
import { tokenView } from './api/tokens.js';
import { createClientToken, createOperatorToken } from './bootstrap.js';
import { cliActor, EXIT_UNAVAILABLE, failed, operatorToken, type CliOutcome } from './cli-admin.js';
import { apiRequest, runningGateway, type ApiAnswer } from './cli-remote.js';
import { mintedBy } from './tokens.js';

// `token create|list|revoke` and `principals set-role|delete`. Changes go through the running
// gateway's control API when one runs (so it closes the affected sockets at once) and write the
// database directly only when none runs; reads always come from the database.

/** What every command here needs: the data dir, a way to open its database, the operator token flag and env. */
export interface AdminContext {
  dataDir: string;
  /** Opens the database; the caller's `close` runs after the command. */
  withStorage<T>(fn: (storage: Storage) => Promise<T>): Promise<T>;
  tokenFlag: string | undefined;
  env: NodeJS.ProcessEnv;
}

const ok = (value: unknown): CliOutcome => ({ code: 0, stdout: `${JSON.stringify(value)}\n` });
const NAME_RE = /^[A-Za-z0-9._@-]{1,64}$/;

/** A running gateway's URL and the operator token to call it with, or the outcome that stops the command. */
async function remote(ctx: AdminContext): Promise<{ url: string; token: string } | CliOutcome | null> {
  const gw = await runningGateway(ctx.dataDir);
  if (!gw.running) return null;
  if (!gw.url) return failed(`a gateway holds ${ctx.dataDir} but does not listen yet (starting or stopping): try again in a moment`, EXIT_UNAVAILABLE);
  const token = operatorToken(ctx.dataDir, ctx.tokenFlag, ctx.env);
  if (!token) {
    return failed(
      `a gateway is running at ${gw.url}, so this change goes through its control API: pass an operator token (--token <secret> or SWITCHBOARD_TOKEN)`,
      2,
    );
  }
  return { url: gw.url, token };
}
const isOutcome = (v: unknown): v is CliOutcome => typeof v === 'object' && v !== null && 'code' in v;
const refused = (a: ApiAnswer): CliOutcome => failed(a.message, a.status === 0 ? EXIT_UNAVAILABLE : 1);

/** `--expires`: a duration from now (`90m`, `12h`, `30d`) or an ISO 8601 date-time; must be in the future. */
export function parseExpiry(v: string | undefined, now = Date.now()): Date | null | string {
  if (v === undefined) return null;
  const days = /^\s*(\d+)\s*d\s*$/.exec(v);
  const ms = days ? Number(days[1]) * 86_400_000 : parseDuration(v);
  const at = ms !== null ? new Date(now + ms) : /^\d{4}-\d{2}-\d{2}T/.test(v) ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) return '--expires must be a duration such as "12h" or "30d", or an ISO date-time such as 2030-01-01T00:00:00Z';
  if (at.getTime() <= now) return '--expires must be in the future';
  return at;
}

/** `token list [--kind k] [--active]`: every token's metadata from the database (never a secret). */
export async function tokenList(ctx: AdminContext, opts: { kind?: string | undefined; active?: boolean | undefined }): Promise<CliOutcome> {
  if (opts.kind !== undefined && opts.kind !== 'client' && opts.kind !== 'operator') return failed('--kind must be client or operator', 2);
  const all = await ctx.withStorage((s) => s.tokens.list());
  return ok({ tokens: all.filter((t) => (!opts.kind || t.kind === opts.kind) && (!opts.active || t.revokedAt === null)).map(tokenView) });
}

/** `token revoke <id> [--cascade]`. */
export async function tokenRevoke(ctx: AdminContext, id: string | undefined, cascade: boolean): Promise<CliOutcome> {
  if (!id) return failed('usage: switchboard token revoke <token id> [--cascade]  (ids: switchboard token list)', 2);
  const r = await remote(ctx);
  if (isOutcome(r)) return r;
  if (r) {
    const a = await apiRequest(r.url, r.token, 'DELETE', `/tokens/${encodeURIComponent(id)}${cascade ? '?cascade=true' : ''}`);
    return a.ok ? ok(a.json) : refused(a);
  }
  return ctx.withStorage(async (storage) => {
    const all = await storage.tokens.list();
    const token = all.find((t) => t.id === id);
    if (!token) return failed(`no token ${id}`);
    if (token.revokedAt) return failed(`token ${id} was already revoked`);
    const targets = [token, ...(cascade ? mintedBy(all, id) : [])];
    for (const t of targets) {
      await storage.tokens.revoke(t.id);
      await storage.audit.append({
        actor: cliActor(),
        action: 'token.revoke',
        target: t.id,
        detail: { kind: t.kind, name: t.name, ...(t === token ? {} : { cascadeFrom: id }) },
      });
    }
    const after = new Map((await storage.tokens.list()).map((t) => [t.id, t]));
    return ok({ token: tokenView(after.get(id)!), cascaded: targets.slice(1).map((t) => tokenView(after.get(t.id)!)) });
  });
}

/** `token create --kind client|operator ...`: the same JSON output whichever way it went. */
export async function tokenCreate(
  ctx: AdminContext,
  v: {
    kind?: string | undefined;
    principal?: string | undefined;
    role?: string | undefined;
    scopes?: string | undefined;
    name?: string | undefined;
    expires?: string | undefined;
  },
): Promise<CliOutcome> {
  const expiresAt = parseExpiry(v.expires);
  if (typeof expiresAt === 'string') return failed(expiresAt, 2);
  if (v.name !== undefined && !NAME_RE.test(v.name)) return failed('--name must be 1–64 letters, digits, ".", "_", "@" or "-"', 2);
  const expiry = expiresAt ? { expiresAt: expiresAt.toISOString() } : {};
  if (v.kind === 'client') {
    const principal = v.principal;
    if (!principal || !NAME_RE.test(principal)) return failed('--principal <name> is required (letters, digits, . _ @ -; at most 64)', 2);
    const role = v.role ?? 'member';
    if (!ROLES.includes(role as Role)) return failed(`--role must be one of ${ROLES.join(', ')}`, 2);
    const name = v.name ?? `${principal}-client`;
    const r = await remote(ctx);
    if (isOutcome(r)) return r;
    if (r) {
      const existing = await ctx.withStorage((s) => s.principals.byName(principal));
      let principalId = existing?.id;
      if (!principalId) {
        const made = await apiRequest<{ principal: { id: string } }>(r.url, r.token, 'POST', '/principals', { name: principal, role });
        if (!made.ok) return refused(made);
        principalId = made.json.principal.id;
      }
      const a = await apiRequest<{ token: { id: string }; secret: string }>(r.url, r.token, 'POST', '/tokens', {
        kind: 'client',
        principalId,
        name,
        ...expiry,
      });
      if (!a.ok) return refused(a);
      return ok({ kind: 'client', principal, principalId, tokenId: a.json.token.id, createdPrincipal: !existing, secret: a.json.secret });
    }
    const c = await ctx.withStorage((s) => createClientToken(s, principal, role as Role, name, { expiresAt, createdBy: cliActor() }));
    return ok({ kind: 'client', principal, principalId: c.principalId, tokenId: c.tokenId, createdPrincipal: c.createdPrincipal, secret: c.secret });
  }
  if (v.kind === 'operator') {
    const scopes = [
      ...new Set(
        String(v.scopes ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ];
    if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s as Scope))) return failed(`--scopes must list some of ${SCOPES.join(', ')}`, 2);
    const name = v.name ?? 'operator';
    const r = await remote(ctx);
    if (isOutcome(r)) return r;
    if (r) {
      const a = await apiRequest<{ token: { id: string }; secret: string }>(r.url, r.token, 'POST', '/tokens', { kind: 'operator', name, scopes, ...expiry });
      return a.ok ? ok({ kind: 'operator', scopes, tokenId: a.json.token.id, secret: a.json.secret }) : refused(a);
    }
    const o = await ctx.withStorage((s) => createOperatorToken(s, name, scopes as Scope[], { expiresAt, createdBy: cliActor() }));
    return ok({ kind: 'operator', scopes, tokenId: o.tokenId, secret: o.secret });
  }
  return failed('--kind must be client or operator (see switchboard token create --help)', 2);
}

/** `principals set-role <name> <role>` and `principals delete <name>`. */
export async function principalChange(ctx: AdminContext, sub: 'set-role' | 'delete', name: string, role?: string): Promise<CliOutcome> {
  if (sub === 'set-role' && !ROLES.includes(role as Role)) return failed(`the role must be one of ${ROLES.join(', ')}`, 2);
  const p = await ctx.withStorage((s) => s.principals.byName(name));
  if (!p) return failed(`no principal named ${name}`);
  const r = await remote(ctx);
  if (isOutcome(r)) return r;
  if (r) {
    const a =
      sub === 'set-role'
        ? await apiRequest(r.url, r.token, 'PATCH', `/principals/${encodeURIComponent(p.id)}`, { role })
        : await apiRequest(r.url, r.token, 'DELETE', `/principals/${encodeURIComponent(p.id)}`);
    return a.ok ? ok(a.json) : refused(a);
  }
  return ctx.withStorage(async (storage) => {
    if (sub === 'set-role') {
      const res = await principalService.update(storage, p.id, { role: role as Role }, cliActor());
      return res.ok ? ok({ principal: await principalView(storage, res.value) }) : failed(res.message);
    }
    // Offline (no gateway running) the CLI erases what the gateway would: memories, profile and the
    // per-person workspaces under the default root (a custom `workspaces.root` is the gateway's to clean: delete through the control API).
    const res = await principalService.remove(storage, p.id, cliActor(), personalDataOf(storage, join(ctx.dataDir, 'workspaces')));
    return res.ok ? ok({ deleted: p.id, unlinkedIdentities: res.value.identities, revokedTokens: res.value.tokens }) : failed(res.message);
  });
}
