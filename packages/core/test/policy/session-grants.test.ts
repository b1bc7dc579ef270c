import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationRef, Session } from '@switchboard/core';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import { SessionGrants } from '../../src/policy/session-grants.js';

const TTL = 60_000;
const to: ConversationRef = { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' };

let storage: SqliteStorage;
let told: string[];
let grants: SessionGrants;
let session: Session;

beforeEach(async () => {
  storage = openSqliteStorage({ file: ':memory:' });
  told = [];
  grants = new SessionGrants({
    storage,
    log: pino({ level: 'silent' }),
    ttlMs: TTL,
    onRulesChanged: () => {},
    notify: async (_to, text) => void told.push(text),
  });
  session = await storage.sessions.resolve({ agent: 'default', channel: 'websocket', account: 'default', scope: 'dm', principalId: 'p1' });
});
afterEach(() => {
  grants.close();
  storage.close();
});

const audit = async (action: string) => (await storage.audit.list({ action })).map((e) => e.detail as Record<string, unknown>);

describe('SessionGrants: a session mode above the broader mode is a grant', () => {
  it('is stamped and audited when set, kept within its TTL, and lapses after it (audited, the person told)', async () => {
    session = await storage.sessions.updateSettings(session.id, { mode: 'acceptEdits' });
    await grants.modeSet(session, 'acceptEdits', 'default', 'principal:p1');
    session = (await storage.sessions.get(session.id))!;
    expect(session.settings.modeGrantedAt).toEqual(expect.any(Number));
    expect(await audit('grant.created')).toEqual([expect.objectContaining({ kind: 'mode', mode: 'acceptEdits', above: 'default' })]);

    session = await grants.atTurnStart(session, 'default', to);
    expect(session.settings.mode).toBe('acceptEdits');
    expect(told).toEqual([]);

    session = await storage.sessions.updateSettings(session.id, { modeGrantedAt: Date.now() - TTL - 1 });
    session = await grants.atTurnStart(session, 'default', to);
    expect(session.settings.mode).toBeUndefined();
    expect(session.settings.modeGrantedAt).toBeUndefined();
    expect(await audit('grant.lapsed')).toEqual([expect.objectContaining({ kind: 'mode', mode: 'acceptEdits' })]);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/acceptEdits mode of this session \(back to default\)/);
    // Told once.
    await grants.atTurnStart(session, 'default', to);
    expect(told).toHaveLength(1);
  });

  it('a mode at or below the broader mode is no grant and never lapses', async () => {
    session = await storage.sessions.updateSettings(session.id, { mode: 'plan' });
    await grants.modeSet(session, 'plan', 'default', 'principal:p1');
    expect(await audit('grant.created')).toEqual([]);
    session = await grants.atTurnStart((await storage.sessions.get(session.id))!, 'default', to);
    expect(session.settings.mode).toBe('plan');
    expect(told).toEqual([]);
  });

  it('an elevated mode from before grants existed (no stamp) lapses at the next turn', async () => {
    session = await storage.sessions.updateSettings(session.id, { mode: 'bypassPermissions' });
    session = await grants.atTurnStart(session, 'acceptEdits', to);
    expect(session.settings.mode).toBeUndefined();
    expect(told[0]).toMatch(/bypassPermissions/);
  });

  it('session rules count as live until their TTL; other scopes never lapse', () => {
    const now = Date.now();
    expect(grants.isLive({ scopeKind: 'session', createdAt: new Date(now - TTL + 1000) }, now)).toBe(true);
    expect(grants.isLive({ scopeKind: 'session', createdAt: new Date(now - TTL) }, now)).toBe(false);
    expect(grants.isLive({ scopeKind: 'principal', createdAt: new Date(0) }, now)).toBe(true);
  });
});
