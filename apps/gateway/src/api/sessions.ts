import type { Session, Sidechain, Storage } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendError, type RouteModule } from './deps.js';

/** The JSON shape of a session. */
export const sessionView = (s: Session) => ({
  id: s.id,
  key: s.key,
  agentId: s.agentId,
  channel: s.channel,
  account: s.account,
  scope: s.scope,
  principalId: s.principalId,
  conversation: s.conversation,
  thread: s.thread,
  settings: s.settings,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
  endedAt: s.endedAt ? s.endedAt.toISOString() : null,
});

/** Sessions and transcripts (scope `read`). */
export const sessionRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/sessions',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({
          principalId: z.string().max(64).optional(),
          channel: z.string().max(64).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (req) => ({ sessions: (await storage.sessions.list(req.query)).map(sessionView) }),
  );

  r.get(
    '/sessions/:id/transcript',
    { config: { scope: 'read' }, schema: { params: z.strictObject({ id: z.string().min(1).max(64) }) } },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      return transcriptView(storage, session);
    },
  );

  r.get(
    '/sessions/:id/sidechains/:toolUseId',
    {
      config: { scope: 'read' },
      schema: { params: z.strictObject({ id: z.string().min(1).max(64), toolUseId: z.string().min(1).max(128) }) },
    },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      const chain = await storage.sidechains.get(session.id, req.params.toolUseId);
      if (!chain) return sendError(reply, 404, 'not_found', `No sidechain for tool_use ${req.params.toolUseId} in session ${session.id}.`);
      return {
        ...sidechainLink(session.id, chain),
        messages: chain.messages,
        createdAt: chain.createdAt.toISOString(),
        updatedAt: chain.updatedAt.toISOString(),
      };
    },
  );
};

/** A session and its whole transcript, as the API shows them: an assistant entry links the sidechains of its `task` calls (docs/subagents.md). */
export async function transcriptView(storage: Storage, session: Session) {
  const entries = await storage.sessions.load(session.id);
  const sidechains = new Map((await storage.sidechains.list(session.id)).map((c) => [c.toolUseId, sidechainLink(session.id, c)]));
  return {
    session: sessionView(session),
    entries: entries.map((e) => {
      const links = toolUseIdsOf(e.payload)
        .map((id) => sidechains.get(id))
        .filter((link) => link !== undefined);
      return {
        seq: e.seq,
        kind: e.kind,
        turnId: e.turnId,
        payload: e.payload,
        createdAt: e.createdAt.toISOString(),
        ...(links.length > 0 ? { sidechains: links } : {}),
      };
    }),
  };
}

/** A sidechain as the transcript links it. */
function sidechainLink(sessionId: string, c: Sidechain) {
  return {
    toolUseId: c.toolUseId,
    turnId: c.turnId,
    type: c.type,
    description: c.description,
    state: c.state,
    href: `/api/v1/sessions/${encodeURIComponent(sessionId)}/sidechains/${encodeURIComponent(c.toolUseId)}`,
  };
}

/** The tool_use ids of a stored assistant payload (none for any other shape). */
function toolUseIdsOf(payload: unknown): string[] {
  const content = typeof payload === 'object' && payload !== null && Object.hasOwn(payload, 'content') ? (payload as { content: unknown }).content : undefined;
  if (!Array.isArray(content)) return [];
  return content.flatMap((b: unknown) =>
    typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'tool_use' && typeof (b as { id?: unknown }).id === 'string'
      ? [(b as { id: string }).id]
      : [],
  );
}
