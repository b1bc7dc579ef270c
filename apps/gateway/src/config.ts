import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import JSON5 from 'json5';
import { z } from 'zod';
import {
  DEFAULT_AUTO_CLASSIFIER,
  ROLE_MODE_CEILING,
  SwbError,
  permissionModeSchema,
  SwbErrorCode,
  TOOL_GROUPS,
  checkRuleText,
  duration,
  hooksConfigSchema,
  scrubSecretValues,
} from '@switchboard/core';
import { McpServerConfigSchema } from '@switchboard/tools';
import { CHANNEL_MODULES, channelsSchema } from './config-channels.js';
import { budgetsSchema } from './config-budgets.js';
import { inboundFilesSchema } from './config-inbound-files.js';
import { metricsSchema } from './config-metrics.js';
import { databaseSecrets, storageSchema } from './config-storage.js';
import { replicaIdSchema, replicasSchema } from './config-replicas.js';
import { consoleSchema } from './config-console.js';
import { capabilitiesSchema } from './config-capabilities.js';
import { contextSchema } from './config-context.js';
import { modelsSchema } from './config-models.js';
import { toolOptionsSchema, toolsSchema } from './config-tools.js';
import { agentsMdSchema, instructionsFileSchema, resolveInstructionsPath } from './config-instructions.js';
import { agentSkillsSchema, resolveSkillDirs, skillsSchema } from './config-skills.js';
import { parseProxyRange } from './client-address.js';
import { agentSubagentsSchema, subagentLimitsSchema } from './config-subagents.js';
import { TOOL_PROFILES } from '@switchboard/core';
import { isTimeZone } from '@switchboard/core';

const ROLE = z.enum(['owner', 'admin', 'member', 'guest']);
const permissionMode = permissionModeSchema;

/** A classifier timeout: at least 200 ms (a shorter one would time out every call). */
const classifierTimeout = duration.pipe(z.number().min(200, 'must be at least 200ms').max(600_000, 'must be at most 10min'));

/** `permissions.auto`: the auto-mode classifier (docs/auto-mode.md). */
const autoSchema = z
  .strictObject({
    /** The (cheaper) model the classifier asks; unset: the gateway's `model.name`. */
    model: z.string().min(1).optional(),
    /** How long the fast stage may take before the call goes to a person. */
    fastTimeout: classifierTimeout.default(DEFAULT_AUTO_CLASSIFIER.fastTimeoutMs),
    /** How long the reasoning stage (after a fast block) may take before the call goes to a person. */
    reasonTimeout: classifierTimeout.default(DEFAULT_AUTO_CLASSIFIER.reasonTimeoutMs),
    /** Output tokens of the fast stage: a tiny budget, just enough for the verdict. */
    fastMaxTokens: z.number().int().min(16).max(1024).default(DEFAULT_AUTO_CLASSIFIER.fastMaxTokens),
    /** Output tokens of the reasoning stage. */
    reasonMaxTokens: z.number().int().min(64).max(8192).default(DEFAULT_AUTO_CLASSIFIER.reasonMaxTokens),
  })
  .prefault({});

/** A permission rule string, `Tool`, `Tool(content)` or a `group:*` shorthand, checked when the config loads. */
const ruleString = z.string().superRefine((s, ctx) => {
  const check = checkRuleText(s);
  if (!check.ok) ctx.addIssue({ code: 'custom', message: check.message });
});
const ruleLists = z.strictObject({
  allow: z.array(ruleString).default([]),
  ask: z.array(ruleString).default([]),
  deny: z.array(ruleString).default([]),
});

/** An HTTP server timeout: never 0 (which would switch the protection off). */
const serverTimeout = duration.refine((ms) => ms >= 100, 'must be at least 100ms');

const toolSet = z.enum([...TOOL_PROFILES, ...TOOL_GROUPS]);

const agent = z.strictObject({
  systemPrompt: z.string().default('You are Switchboard, a helpful assistant. Be concise.'),
  /** A file whose text replaces `systemPrompt` (docs/instructions.md). */
  instructionsFile: instructionsFileSchema,
  /** The tools this agent offers: a profile, a `group:*`, or a list of them (combined). */
  tools: z.strictObject({ profile: z.union([toolSet, z.array(toolSet).min(1).max(10)]).default('coding') }).default({ profile: 'coding' }),
  /** Per-agent overrides of the top-level `tools` section (`toolOptions.exec.network`, …). */
  toolOptions: toolOptionsSchema,
  mode: permissionMode.default('default'),
  maxTurns: z.number().int().min(1).max(200).default(25),
  /** Permission rules at this agent's scope. */
  permissions: ruleLists.default({ allow: [], ask: [], deny: [] }),
  /** A message that arrives during a turn: `followup` queues it as the next turn; `steer` injects it into the running turn. */
  queueMode: z.enum(['followup', 'steer']).default('followup'),
  /** `per-person`: each person (and each room) has its own workspace; `shared`: one `shared/` directory for everyone. */
  workspace: z.strictObject({ mode: z.enum(['per-person', 'shared']).default('per-person') }).prefault({}),
  /** The IANA time zone of the date and time stamped into each turn (`Current time: …`). */
  timezone: z.string().refine(isTimeZone, 'expected an IANA time zone such as "UTC" or "Europe/Berlin"').default('UTC'),
  /** The agent's own skill directories, and whether its workspace's `skills/` folder counts (config-skills.ts). */
  skills: agentSkillsSchema,
  /** Subagent types (config-subagents.ts): set, even to `{}`, to offer the `task` tool with the built-in `general` type. */
  subagents: agentSubagentsSchema,
});

export const configSchema = z.strictObject({
  gateway: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(7420),
      dataDir: z.string().min(1).default('./data'),
      /** Largest accepted HTTP body, in bytes. */
      bodyLimit: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024)
        .default(1024 * 1024),
      /** Reverse proxies (addresses or CIDRs) whose `X-Forwarded-For` names the client; none by default. */
      trustedProxies: z
        .array(z.string().refine((t) => parseProxyRange(t) !== null, 'expected an IP address or CIDR range'))
        .max(100)
        .default([]),
      /** A request's headers must arrive within this time (slow clients are cut off). */
      headersTimeout: serverTimeout.default(10_000),
      /** A whole request (headers and body) must arrive within this time. */
      requestTimeout: serverTimeout.default(30_000),
      /** An idle connection is closed after this time; longer than any request the gateway holds open. */
      connectionTimeout: serverTimeout.default(180_000),
      /** `/readyz` channel details: `token` needs a `read` operator token; `public` shows them to anyone. */
      readyzDetails: z.enum(['token', 'public']).default('token'),
      /** This replica's id among replicas on one PostgreSQL (config-replicas.ts); unset: `<hostname>-<pid>-<random>`, new per start. */
      replicaId: replicaIdSchema.optional(),
    })
    .refine((g) => g.headersTimeout <= g.requestTimeout, { path: ['headersTimeout'], message: 'must not be longer than gateway.requestTimeout' })
    .prefault({}),
  /** Where the state lives (config-storage.ts): the embedded SQLite file, or a PostgreSQL server. */
  storage: storageSchema,
  /** Replicas on one PostgreSQL (config-replicas.ts): lease lengths. */
  replicas: replicasSchema,
  log: z.strictObject({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info') }).default({ level: 'info' }),
  model: z
    .strictObject({
      name: z.string().min(1).default('claude-sonnet-4-5'),
      fallback: z.string().min(1).optional(),
      baseUrl: z.union([z.url(), z.literal('')]).default(''),
      apiKey: z.string().default(''),
      maxTokens: z.number().int().min(1).max(128_000).default(4096),
    })
    .default({ name: 'claude-sonnet-4-5', baseUrl: '', apiKey: '', maxTokens: 4096 }),
  /** Per model (config-models.ts): `models.<name>` limits and prices over the built-in defaults. */
  models: modelsSchema.default({}),
  /** Context management (config-context.ts): shapers' thresholds, compaction, tool-result budgets. */
  context: contextSchema,
  /** Budgets (config-budgets.ts): per-day and per-month token and USD limits per principal, role, agent and gateway. */
  budgets: budgetsSchema,
  /** The gateway's own instructions, first in every agent's system prompt (docs/instructions.md). */
  instructionsFile: instructionsFileSchema,
  /** Skills (config-skills.ts, docs/skills.md): directories of skill folders every agent offers. */
  skills: skillsSchema,
  /** The person's `AGENTS.md` (config-instructions.ts). */
  agentsMd: agentsMdSchema,
  /** Built-in tool settings: `tools.exec` (docs/exec.md). */
  tools: toolsSchema,
  /** Subagent limits (config-subagents.ts): nesting depth, concurrency per turn and per gateway, timeout of one `task` call. */
  subagents: subagentLimitsSchema,
  /** Files people send (config-inbound-files.ts): image blocks for the model. */
  files: inboundFilesSchema,
  agents: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/), agent).default(() => ({ default: agent.parse({}) })),
  permissions: z
    .strictObject({
      allow: z.array(ruleString).default([]),
      ask: z.array(ruleString).default([]),
      deny: z.array(ruleString).default([]),
      /** A gateway-wide mode ceiling: narrower scopes may lower it, never raise it. Unset: no gateway-wide cap. */
      mode: permissionMode.optional(),
      /** A pending approval becomes a denial after this long. */
      approvalTimeout: duration.default(30 * 60_000),
      /** Roles whose members may approve their own tool calls (owners and admins may approve anyone's). */
      selfApproveRoles: z.array(ROLE).default(['owner', 'admin', 'member']),
      denialLimits: z
        .strictObject({ consecutive: z.number().int().min(1).max(100).default(3), total: z.number().int().min(1).max(1000).default(20) })
        .default({ consecutive: 3, total: 20 }),
      /** Default time a hook may take (a hook's own `timeoutMs` wins). */
      hookTimeout: duration.default(10_000),
      /** The most trusted mode each role may run in, whatever any scope says. */
      roleCeilings: z
        .strictObject({
          owner: permissionMode.default(ROLE_MODE_CEILING.owner),
          admin: permissionMode.default(ROLE_MODE_CEILING.admin),
          member: permissionMode.default(ROLE_MODE_CEILING.member),
          guest: permissionMode.default(ROLE_MODE_CEILING.guest),
        })
        .prefault({}),
      /** The auto-mode classifier (docs/auto-mode.md). */
      auto: autoSchema,
      /** How long a session grant (a session rule, or a session mode above the broader mode) lasts. */
      sessionGrantTtl: duration
        .pipe(
          z
            .number()
            .min(200, 'sessionGrantTtl must be at least 200ms')
            .max(365 * 86_400_000),
        )
        .default(12 * 3_600_000),
    })
    .default({
      allow: [],
      ask: [],
      deny: [],
      approvalTimeout: 30 * 60_000,
      selfApproveRoles: ['owner', 'admin', 'member'],
      denialLimits: { consecutive: 3, total: 20 },
      hookTimeout: 10_000,
      roleCeilings: { ...ROLE_MODE_CEILING },
      auto: autoSchema.parse({}),
      sessionGrantTtl: 12 * 3_600_000,
    }),
  pairing: z
    .strictObject({
      /** How long a pairing code stays valid. */
      codeTtl: duration.default(3_600_000),
      /** Pending requests per channel account at most; a new one past it expires the oldest. */
      maxPending: z.number().int().min(1).max(1000).default(20),
      /** Messages kept per pending request (the first counts); later ones are not kept. */
      maxHeld: z.number().int().min(1).max(100).default(5),
      /** Bytes of held messages (stored size) per pending request at most. */
      maxHeldBytes: z
        .number()
        .int()
        .min(1024)
        .max(16 * 1024 * 1024)
        .default(64 * 1024),
      /** Least time between two pairing requests of one identity on one account. */
      cooldown: duration.default(600_000),
      /** How often expired codes are swept (and their senders told). */
      sweepInterval: duration.default(30_000),
    })
    .prefault({}),
  /** The audit log. */
  audit: z
    .strictObject({
      /** Rate-limited messages are audited as one row per sender per window, with a count. */
      rateLimitWindow: duration.default(600_000),
    })
    .prefault({}),
  /** Prometheus metrics at `/metrics` (docs/metrics.md). */
  metrics: metricsSchema,
  /** The operators' console and the team's web chat (docs/console.md). */
  console: consoleSchema,
  /** Failed-auth rate limiting per client address (control API and WebSocket alike). */
  auth: z
    .strictObject({
      /** Wrong tokens from one address within `window` before it is locked out. */
      maxFailures: z.number().int().min(1).max(1000).default(10),
      window: duration.default(60_000),
      /** How long a locked-out address is refused (429 with Retry-After). */
      lockout: duration.default(300_000),
    })
    .default({ maxFailures: 10, window: 60_000, lockout: 300_000 }),
  /** Where the workspaces live; `root` defaults to `<dataDir>/workspaces` (a relative path is resolved like `dataDir`). */
  workspaces: z.strictObject({ root: z.string().min(1).optional() }).prefault({}),
  /** Hooks per event (PreToolUse, PostToolUse, PermissionRequest, …): command or http. */
  hooks: hooksConfigSchema.default({}),
  /** Capabilities: `offeredTo` per tool name, the roles offered it by default (over the built-in defaults: `exec` → owner, admin). */
  capabilities: capabilitiesSchema,
  /** MCP servers whose tools join the registry as `mcp__<server>__<tool>`. */
  mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/), McpServerConfigSchema).default({}),
  /** One section per channel module (config-channels.ts): `channels.<type>.accounts.<id>`. */
  channels: channelsSchema(CHANNEL_MODULES).default({}),
  limits: z
    .strictObject({
      modelRequestTimeout: duration.default(60_000),
      modelStreamIdleTimeout: duration.default(60_000),
      modelMaxRetries: z.number().int().min(0).max(20).default(4),
      modelRetryBaseDelay: duration.default(500),
      modelRetryMaxDelay: duration.default(30_000),
      maxContinuations: z.number().int().min(0).max(10).default(3),
      toolTimeout: duration.default(120_000),
      /** Per-tool overrides of toolTimeout, by tool name. */
      toolTimeouts: z.record(z.string().min(1).max(64), duration).default({}),
      shutdownGrace: duration.default(10_000),
      mcpConnectTimeout: duration.default(15_000),
      /** Sessions whose transcripts stay in memory, and transcript entries kept over all of them. */
      transcriptCacheSessions: z.number().int().min(1).max(100_000).default(256),
      transcriptCacheEntries: z.number().int().min(100).max(10_000_000).default(50_000),
      /** Tool results longer than this are cut for the model (kept whole in the store), for every tool without its own cap. */
      toolResultMaxChars: z.number().int().min(100).max(10_000_000).default(50_000),
      /** Longest regular expression accepted from the model (search_files) or the config, in characters. */
      regexMaxLength: z.number().int().min(16).max(100_000).default(1000),
      /** Longest one file's regex matching may run in search_files' worker before it is terminated. */
      regexDeadline: duration.refine((v) => v >= 10, { message: 'must be at least 10ms' }).default(1000),
      /** Attempts to store or process one inbound item before it becomes a dead letter. */
      inboxMaxAttempts: z.number().int().min(1).max(100).default(5),
      /** Largest inbound item the inbox stores (its JSON, in bytes); larger ones are refused. */
      inboxMaxBytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024)
        .default(1024 * 1024),
    })
    .default({
      modelRequestTimeout: 60_000,
      modelStreamIdleTimeout: 60_000,
      modelMaxRetries: 4,
      modelRetryBaseDelay: 500,
      modelRetryMaxDelay: 30_000,
      maxContinuations: 3,
      toolTimeout: 120_000,
      toolTimeouts: {},
      shutdownGrace: 10_000,
      mcpConnectTimeout: 15_000,
      transcriptCacheSessions: 256,
      transcriptCacheEntries: 50_000,
      toolResultMaxChars: 50_000,
      regexMaxLength: 1000,
      regexDeadline: 1000,
      inboxMaxAttempts: 5,
      inboxMaxBytes: 1024 * 1024,
    }),
});

export type Config = z.output<typeof configSchema>;

/** A config problem, reported with the key's path; exits the process with code 78. */
export class ConfigError extends SwbError {
  constructor(message: string) {
    super(SwbErrorCode.Config, message);
    this.name = 'ConfigError';
  }
}

const SECRET_KEYS = /(apikey|token|secret|password)$/i;

/** Expands `${VAR}` and `${VAR:-default}` in every string of the parsed config. */
export function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: string[] = [], vars?: Map<string, string[]>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}/g, (_m, name: string, hasDefault?: string, def?: string) => {
      if (vars) vars.set(path.join('.'), [...(vars.get(path.join('.')) ?? []), name]);
      const v = Object.hasOwn(env, name) ? env[name] : undefined;
      if (v !== undefined && v !== '') return v;
      if (hasDefault !== undefined) return def ?? '';
      throw new ConfigError(`${path.join('.') || '(root)'}: environment variable ${name} is not set (use \${${name}:-default} for an optional value)`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...path, String(i)], vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, [...path, k], vars)]));
  }
  return value;
}

function collectSecrets(value: unknown, out: string[], key = ''): void {
  if (typeof value === 'string') {
    if (SECRET_KEYS.test(key) && value.length > 0) out.push(value);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collectSecrets(v, out, k);
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Parses, interpolates, overrides from the environment, validates and freezes the config. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv, baseDir: string): Readonly<Config> {
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (err) {
    throw new ConfigError(`the config is not valid JSON5: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError('the config must be an object');
  const vars = new Map<string, string[]>();
  const expanded = interpolate(raw, env, [], vars) as { gateway?: Record<string, unknown>; model?: Record<string, unknown>; [key: string]: unknown };
  const gw = (expanded.gateway ??= {});
  if (env.SWITCHBOARD_HOST) gw.host = env.SWITCHBOARD_HOST;
  if (env.SWITCHBOARD_PORT !== undefined && env.SWITCHBOARD_PORT !== '') {
    const port = Number(env.SWITCHBOARD_PORT);
    if (!Number.isInteger(port)) throw new ConfigError('SWITCHBOARD_PORT: expected a whole number from 0 to 65535');
    gw.port = port;
  }
  if (env.SWITCHBOARD_DATA_DIR) gw.dataDir = env.SWITCHBOARD_DATA_DIR;
  const model = (expanded.model ??= {});
  if (!model.apiKey && env.ANTHROPIC_API_KEY) model.apiKey = env.ANTHROPIC_API_KEY;
  if (!model.baseUrl && env.ANTHROPIC_BASE_URL) model.baseUrl = env.ANTHROPIC_BASE_URL;
  const storage = expanded.storage;
  if (storage && typeof storage === 'object' && !Array.isArray(storage) && env.DATABASE_URL) {
    const st = storage as Record<string, unknown>;
    if (st.kind === 'postgres' && (st.url === undefined || st.url === '')) st.url = env.DATABASE_URL;
  }
  const secrets: string[] = [];
  collectSecrets(expanded, secrets);
  if (storage && typeof storage === 'object' && typeof (storage as { url?: unknown }).url === 'string') {
    secrets.push(...databaseSecrets((storage as { url: string }).url));
  }
  const parsed = configSchema.safeParse(expanded);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = i.path.join('.') || '(root)';
      const msg = scrubSecretValues(i.message, secrets);
      if (i.code === 'unrecognized_keys') return `${key ? `${key}: ` : ''}unknown key(s) ${i.keys.map((k) => `"${[...i.path, k].join('.')}"`).join(', ')}`;
      return `${key}: ${msg}`;
    });
    throw new ConfigError(`invalid config:\n  ${lines.join('\n  ')}`);
  }
  const cfg = parsed.data;
  checkOpenaiWaits(cfg);
  if (!isAbsolute(cfg.gateway.dataDir)) cfg.gateway.dataDir = resolve(baseDir, cfg.gateway.dataDir);
  if (cfg.workspaces.root !== undefined && !isAbsolute(cfg.workspaces.root)) cfg.workspaces.root = resolve(baseDir, cfg.workspaces.root);
  if (cfg.console.root !== undefined && !isAbsolute(cfg.console.root)) cfg.console.root = resolve(baseDir, cfg.console.root);
  cfg.instructionsFile = resolveInstructionsPath(cfg.instructionsFile, baseDir);
  cfg.skills = { ...cfg.skills, dirs: resolveSkillDirs(cfg.skills.dirs, baseDir) };
  // New agent objects: a schema default may be shared with (and frozen by) an earlier parse.
  cfg.agents = Object.fromEntries(
    Object.entries(cfg.agents).map(([id, agent]) => [
      id,
      {
        ...agent,
        instructionsFile: resolveInstructionsPath(agent.instructionsFile, baseDir),
        skills: { ...agent.skills, dirs: resolveSkillDirs(agent.skills.dirs, baseDir) },
      },
    ]),
  );
  const frozen = deepFreeze(cfg);
  CONFIG_VARIABLES.set(frozen, vars);
  return frozen;
}

/**
 * A non-streaming OpenAI request is silent while its turn waits for an approval and then the model:
 * the idle connection must outlive both, or the client is cut off before its answer.
 */
function checkOpenaiWaits(cfg: Config): void {
  const lines: string[] = [];
  for (const [id, account] of Object.entries(cfg.channels.openai?.accounts ?? {})) {
    if (account.approvalWait + cfg.limits.modelRequestTimeout < cfg.gateway.connectionTimeout) continue;
    lines.push(
      `channels.openai.accounts.${id}.approvalWait: ${account.approvalWait} ms + limits.modelRequestTimeout (${cfg.limits.modelRequestTimeout} ms) ` +
        `must be below gateway.connectionTimeout (${cfg.gateway.connectionTimeout} ms): shorten approvalWait or raise gateway.connectionTimeout`,
    );
  }
  if (lines.length > 0) throw new ConfigError(`invalid config:\n  ${lines.join('\n  ')}`);
}

const CONFIG_VARIABLES = new WeakMap<object, ReadonlyMap<string, readonly string[]>>();

/** The `${VAR}` names each dotted config key was read from (`channels.slack.accounts.team.botToken` → `['SLACK_BOT_TOKEN']`). */
export function configVariables(cfg: Readonly<Config>): ReadonlyMap<string, readonly string[]> {
  return CONFIG_VARIABLES.get(cfg) ?? new Map();
}

/** Reads and parses a config file. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv, cwd: string): Readonly<Config> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read the config file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseConfig(text, env, cwd);
}

/** The config's secret values, for log scrubbing. */
export function configSecrets(cfg: Config): string[] {
  const out: string[] = [];
  collectSecrets(cfg, out);
  out.push(...databaseSecrets(cfg.storage.url));
  return out;
}
