import type { IncomingMessage } from 'node:http';
import type {
  AccessEvents,
  ApprovalBroker,
  BudgetService,
  CapabilityRegistry,
  Channel,
  PersonalData,
  PolicyService,
  Storage,
  TurnEngine,
} from '@switchboard/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { FailedAuthGate } from '../auth-limiter.js';
import type { ResolvedModel } from '../config-models.js';
import type { BoundaryService } from '@switchboard/core';
import type { ConsoleAuth } from '../console/request-auth.js';
import type { ReplicaPlane } from '../wiring/replicas.js';

/** What the control API's route modules work with. */
export interface ControlApiDeps {
  storage: Storage;
  broker: ApprovalBroker;
  boundary: BoundaryService;
  channels: readonly Channel[];
  engine: TurnEngine;
  policy: PolicyService;
  registry: CapabilityRegistry;
  /** Failed-auth rate limiting, shared with the WebSocket channel. */
  limiter: FailedAuthGate;
  /** The client key of a request (trusted proxies honoured, IPv6 by /64). */
  clientAddress(req: IncomingMessage): string;
  /** Where token revocations and principal removals or demotions are announced. */
  access: AccessEvents;
  /** Each configured agent's tools (by name), from its profile. */
  agentTools: Readonly<Record<string, readonly string[]>>;
  /** The effective `models.<name>` values and the `max_tokens` calls ask for (read-only). */
  models: { list: readonly ResolvedModel[]; maxTokens: number };
  /** The budgets in force and operators' overrides of them. */
  budgets: BudgetService;
  /** A person's data that deleting the principal exports and erases (memories, workspace; profiles join it). */
  personalData: PersonalData;
  /** This process as a replica, and every replica's leases (`GET /api/v1/replicas`). */
  replicas: ReplicaPlane;
  /** The console's sessions (cookie auth); absent when `console.enabled` is false. */
  console?: ConsoleAuth;
}

/** A control-API route module: registers its routes on the /api/v1 scope. */
export type RouteModule = (app: FastifyInstance, deps: ControlApiDeps) => Promise<void>;

/** Sends a JSON error `{ code, message }`. */
export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ code, message });
}
