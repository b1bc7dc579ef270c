import type { ApprovalBroker, Channel, Storage } from '@switchboard/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BoundaryService } from '../boundary.js';

/** What the control API's route modules work with. */
export interface ControlApiDeps {
  storage: Storage;
  broker: ApprovalBroker;
  boundary: BoundaryService;
  channels: readonly Channel[];
}

/** A control-API route module: registers its routes on the /api/v1 scope. */
export type RouteModule = (app: FastifyInstance, deps: ControlApiDeps) => Promise<void>;

/** Sends a JSON error `{ code, message }`. */
export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ code, message });
}
