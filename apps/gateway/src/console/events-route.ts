import { sendError, type RouteModule } from '../api/deps.js';
import type { Viewer } from './event-hub.js';

/**
 * `GET /api/v1/events`: the console's live stream (server-sent events), for an operator (Bearer or
 * console cookie) or a member's console session; what each viewer gets is filtered server-side
 * (see `EventHub`). `event: <type>\ndata: <json>\n\n`, and `: ping` comments between.
 */
export const eventsRoute: RouteModule = async (app, deps) => {
  app.get(
    '/events',
    {
      config: { access: 'viewer' },
      // A stream that never ends has no place in the OpenAPI document (generated clients, the fuzzer): docs/control-api.md describes it.
      schema: { hide: true },
    },
    async (req, reply) => {
      const hub = deps.console?.hub;
      if (!hub) return sendError(reply, 404, 'console_disabled', 'The live stream is part of the console (console.enabled is false).');
      const session = req.consoleSession;
      let viewer: Viewer;
      if (req.member && session) {
        viewer = { kind: 'member', tokenId: req.member.tokenId, principalId: req.member.principalId, sessionHash: session.hash };
      } else if (req.operator) {
        viewer = { kind: 'operator', tokenId: req.operator.id, scopes: req.operator.scopes, ...(session ? { sessionHash: session.hash } : {}) };
      } else {
        return sendError(reply, 401, 'unauthorized', 'Sign in, or send an operator token.');
      }
      const refused = hub.refusal(viewer);
      if (refused) return sendError(reply, 503, 'too_many_streams', refused);
      reply.hijack();
      await hub.open(viewer, reply.raw);
    },
  );
};
