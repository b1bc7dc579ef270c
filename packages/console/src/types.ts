/** The shapes of the control API's answers the console reads (see docs/control-api.md). */

export type HealthState = 'starting' | 'up' | 'degraded' | 'down';

export interface ChannelInfo {
  id: string;
  type: string;
  account: string;
  required: boolean;
  health: { state: HealthState; detail?: string };
  counters?: Record<string, unknown>;
}

export interface Readyz {
  ready: boolean;
  state: string;
  /** The database: its engine and whether it answers (the error when it does not). */
  database?: { engine: string; state: string; error?: string };
  channels?: Record<string, Record<string, unknown>>;
  deadLetters?: { count: number; latest?: { channel: string; failedAt: string; error: string } };
  tools?: { exec?: { available: boolean; sandbox: string; reason?: string } };
  /** The replica that answered and the leases it holds. */
  replica?: { id: string; leases: Array<{ name: string }> };
}

/** `GET /api/v1/replicas`: the replicas on this database and the leases each holds. */
export interface ReplicasView {
  engine: string;
  self: string;
  replicas: Array<{ id: string; self: boolean; since: string; holds: Array<{ name: string; fence: number; expiresAt: string }> }>;
  free: Array<{ name: string; lastOwner: string; fence: number }>;
}

/** The live `stats` event, normalised. */
export interface Stats {
  turnsPerMinute: number | null;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  modelErrors: number | null;
  pendingApprovals: number | null;
  pendingPairing: number | null;
}

export interface TurnEnded {
  channel?: string;
  outcome?: string;
  durationMs?: number;
  at: string;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A `stats` event's data as the console shows it. Accepts `modelLatencyMs: { p50, p95 }` or flat
 * `latencyP50Ms`/`latencyP95Ms`; answers null when the data has none of the figures.
 */
export function statsOf(data: Record<string, unknown>): Stats | null {
  const lat = typeof data.modelLatencyMs === 'object' && data.modelLatencyMs !== null ? (data.modelLatencyMs as Record<string, unknown>) : {};
  const s: Stats = {
    turnsPerMinute: num(data.turnsPerMinute),
    latencyP50Ms: num(lat.p50) ?? num(data.latencyP50Ms),
    latencyP95Ms: num(lat.p95) ?? num(data.latencyP95Ms),
    modelErrors: num(data.modelErrors),
    pendingApprovals: num(data.pendingApprovals),
    pendingPairing: num(data.pendingPairing),
  };
  return Object.values(s).some((v) => v !== null) ? s : null;
}

export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled';

export interface Approval {
  id: string;
  status: ApprovalStatus;
  tool: string;
  summary: string;
  source: string;
  turnId: string;
  toolUseId: string;
  sessionId: string;
  requesterPrincipalId: string | null;
  conversation: unknown;
  decidedBy: string | null;
  decidedAt: string | null;
  always: boolean;
  choices: string[] | null;
  choice: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface PairingRequest {
  code: string;
  channel: string;
  account: string;
  identity: string;
  displayName: string | null;
  status: string;
  heldMessages: number;
  heldBytes: number;
  principalId?: string | null;
  decidedBy: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface Identity {
  id: string;
  channelType: string;
  externalId: string;
  [k: string]: unknown;
}

export interface Principal {
  id: string;
  name: string;
  role: string;
  createdAt: string;
  identities: Identity[];
}

export interface TokenRecord {
  id: string;
  kind: 'operator' | 'client';
  name: string | null;
  principalId: string | null;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdBy: string | null;
}

export interface SessionInfo {
  id: string;
  key: string;
  agentId: string;
  channel: string;
  account: string;
  scope: 'dm' | 'room';
  principalId: string | null;
  conversation: string | null;
  thread: string | null;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
}

export interface TranscriptEntry {
  seq: number;
  kind: string;
  turnId: string | null;
  payload: unknown;
  createdAt: string;
}

export interface AuditEntry {
  id?: string | number;
  at?: string;
  createdAt?: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

export interface UsageFigures {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUsd: number;
  calls: number;
}

export interface UsageAnswer {
  totals: UsageFigures;
  days: Array<UsageFigures & { day: string }>;
}

export interface BudgetLimits {
  day?: { tokens?: number; usd?: number };
  month?: { tokens?: number; usd?: number };
}

export interface Budgets {
  gateway: BudgetLimits;
  agents: Record<string, BudgetLimits>;
  roles: Record<string, BudgetLimits>;
  principals: Record<string, BudgetLimits>;
}
