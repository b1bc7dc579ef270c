import { duration } from '@switchboard/core';
import type { SandboxLimits } from '@switchboard/tools';
import { z } from 'zod';
import { deferralSchema } from './config-deferral.js';
import { webFetchSchema, webSearchSchema } from './config-web.js';
import { sendFileSchema } from './config-send-file.js';

const MIB = 1024 * 1024;

/** Resource limits of one sandboxed command (docs/exec.md, "Sandbox"). */
const limitsSchema = z.strictObject({
  /** CPU seconds (RLIMIT_CPU). */
  cpuSeconds: z.number().int().min(1).max(86_400).optional(),
  /** Address space in MiB (RLIMIT_AS). */
  addressSpaceMiB: z.number().int().min(16).max(1_048_576).optional(),
  /** Processes of the sandbox uid (RLIMIT_NPROC). */
  processes: z.number().int().min(4).max(100_000).optional(),
  /** Largest file a command may write, in MiB (RLIMIT_FSIZE). */
  fileSizeMiB: z.number().int().min(1).max(1_048_576).optional(),
  /** Open files (RLIMIT_NOFILE). */
  openFiles: z.number().int().min(16).max(1_048_576).optional(),
});

/** The per-agent part of `tools.exec`, also `agents.<id>.toolOptions.exec` (every key optional there). */
const execAgentSchema = z.strictObject({
  /** The host network inside the sandbox. */
  network: z.boolean().optional(),
  /** Timeout of a call that names none. */
  timeout: duration.optional(),
  /** Largest `timeout` a call may ask for. */
  maxTimeout: duration.optional(),
  limits: limitsSchema.optional(),
});

const UID_RANGE = /^(\d{1,10})-(\d{1,10})$/u;

/** `tools.exec` (docs/exec.md, docs/configuration.md#tools). */
export const execSchema = execAgentSchema
  .extend({
    /** `bwrap`: every command in the bubblewrap sandbox. `none`: on the host; every call then needs a person's approval. */
    sandbox: z.enum(['bwrap', 'none']).default('bwrap'),
    /** The bwrap binary; default: `bwrap` found on the gateway's PATH. */
    bwrapPath: z.string().startsWith('/', 'must be an absolute path').optional(),
    /** When the gateway runs as root: the unprivileged uids commands run as (one per concurrent run) and their shared group. */
    sandboxUser: z
      .strictObject({
        uids: z
          .string()
          .regex(UID_RANGE, 'expected a uid range such as "61000-61031"')
          .refine((s) => {
            const [, a, b] = UID_RANGE.exec(s) ?? [];
            return Number(a) > 0 && Number(b) >= Number(a) && Number(b) < 2 ** 31;
          }, 'the range must be FIRST-LAST with 0 < FIRST <= LAST')
          .default('61000-61031'),
        gid: z
          .number()
          .int()
          .min(1)
          .max(2 ** 31 - 1)
          .default(61000),
      })
      .prefault({}),
    /** At most this many commands run at once in the gateway, and in one session; more wait in a queue. */
    concurrency: z.strictObject({ gateway: z.number().int().min(1).max(1024).default(4), session: z.number().int().min(1).max(64).default(1) }).prefault({}),
    /** Characters of output kept per command (head and tail). */
    outputChars: z.number().int().min(200).max(1_000_000).default(30_000),
    /** How often a running command reports progress. */
    progressInterval: duration.refine((ms) => ms >= 200, 'must be at least 200ms').default(1000),
    /** Grace between SIGTERM and SIGKILL when a command is stopped. */
    killGrace: duration.refine((ms) => ms >= 100, 'must be at least 100ms').default(2000),
  })
  .superRefine((v, ctx) => {
    const [, a, b] = UID_RANGE.exec(v.sandboxUser.uids) ?? [];
    const uids = Number(b) - Number(a) + 1;
    if (Number.isFinite(uids) && v.concurrency.gateway > uids) {
      ctx.addIssue({
        code: 'custom',
        path: ['concurrency', 'gateway'],
        message: `is ${v.concurrency.gateway}, more than the ${uids} uids of tools.exec.sandboxUser.uids (one uid per concurrent run)`,
      });
    }
  });

/** The top-level `tools` section. */
export const toolsSchema = z
  .strictObject({ exec: execSchema.prefault({}), deferral: deferralSchema, webFetch: webFetchSchema, webSearch: webSearchSchema, sendFile: sendFileSchema })
  .prefault({});

/** `agents.<id>.toolOptions`: per-agent overrides of `tools.*`. */
export const toolOptionsSchema = z.strictObject({ exec: execAgentSchema.prefault({}) }).prefault({});

export type ToolsConfig = z.output<typeof toolsSchema>;
export type ExecConfig = ToolsConfig['exec'];
type ExecAgentConfig = z.output<typeof execAgentSchema>;

/** Defaults of the per-agent keys. */
export const EXEC_DEFAULTS = { network: false, timeout: 120_000, maxTimeout: 600_000 } as const;

/** The uid range of `tools.exec.sandboxUser.uids`. */
export function uidRange(exec: ExecConfig): { first: number; last: number } {
  const [, a, b] = UID_RANGE.exec(exec.sandboxUser.uids) ?? [];
  return { first: Number(a), last: Number(b) };
}

/** One agent's resolved exec settings: the agent's overrides on top of `tools.exec`, then the defaults. */
export function execSettingsOf(exec: ExecConfig, agent: ExecAgentConfig | undefined, base: SandboxLimits) {
  const limits = { ...exec.limits, ...agent?.limits };
  const maxTimeoutMs = agent?.maxTimeout ?? exec.maxTimeout ?? EXEC_DEFAULTS.maxTimeout;
  return {
    network: agent?.network ?? exec.network ?? EXEC_DEFAULTS.network,
    timeoutMs: Math.min(agent?.timeout ?? exec.timeout ?? EXEC_DEFAULTS.timeout, maxTimeoutMs),
    maxTimeoutMs,
    limits: {
      cpuSeconds: limits.cpuSeconds ?? base.cpuSeconds,
      addressSpaceBytes: limits.addressSpaceMiB !== undefined ? limits.addressSpaceMiB * MIB : base.addressSpaceBytes,
      processes: limits.processes ?? base.processes,
      fileSizeBytes: limits.fileSizeMiB !== undefined ? limits.fileSizeMiB * MIB : base.fileSizeBytes,
      openFiles: limits.openFiles ?? base.openFiles,
    },
  };
}
