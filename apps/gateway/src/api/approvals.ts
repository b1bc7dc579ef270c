import { permissionModeSchema, type Approval } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendError, type RouteModule } from './deps.js';

/** An approval as the API shows it. */
export const approvalView = (a: Approval) => ({
  id: a.id,
  status: a.status,
  tool: a.tool,
  summary: a.summary,
  source: a.source,
  turnId: a.turnId,
  toolUseId: a.toolUseId,
  sessionId: a.sessionId,
  requesterPrincipalId: a.requesterPrincipalId,
  conversation: a.conversation,
  decidedBy: a.decidedBy,
  decidedAt: a.decidedAt ? a.decidedAt.toISOString() : null,
  always: a.always,
  choices: a.choices,
  choice: a.choice,
  createdAt: a.createdAt.toISOString(),
  expiresAt: a.expiresAt.toISOString(),
});

/**
 * The body of `POST /approvals/{id}/decision`. `mode` answers a plan approval (`exit_plan_mode`):
 * the mode to switch to, one of the approval's `choices` (absent: the first, least trusted).
 */
export const approvalDecisionBody = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  always: z.boolean().default(false),
  reason: z.string().max(500).optional(),
  mode: permissionModeSchema.optional(),
});

/** Approvals: list and decide (scope `approvals`). */
export const approvalRoutes: RouteModule = async (app, { storage, broker }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/approvals',
    {
      config: { scope: 'approvals' },
      schema: {
        querystring: z.strictObject({
          status: z.enum(['pending', 'allowed', 'denied', 'expired', 'cancelled']).optional(),
          sessionId: z.string().max(64).optional(),
          principalId: z.string().max(64).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (req) => ({ approvals: (await storage.approvals.list(req.query)).map(approvalView) }),
  );

  r.post(
    '/approvals/:id/decision',
    {
      config: { scope: 'approvals' },
      schema: {
        params: z.strictObject({ id: z.string().min(1).max(64) }),
        body: approvalDecisionBody,
      },
    },
    async (req, reply) => {
      const op = req.operator!;
      const res = await broker.decide(
        req.params.id,
        req.body.decision,
        req.body.always,
        { kind: 'operator', tokenName: op.name, scopes: op.scopes },
        req.body.reason,
        req.body.mode,
      );
      if (res.outcome === 'not_found') return sendError(reply, 404, 'not_found', `No approval ${req.params.id}.`);
      if (res.outcome === 'forbidden') return sendError(reply, 403, 'forbidden', res.reason);
      if (res.outcome === 'invalid') return sendError(reply, 400, 'bad_request', res.reason);
      if (res.outcome === 'already_decided') {
        return reply
          .code(409)
          .send({ code: 'already_decided', message: `This approval was already decided (${res.approval.status}).`, approval: approvalView(res.approval) });
      }
      return { approval: approvalView(res.approval) };
    },
  );
};
