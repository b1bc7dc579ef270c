import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { SystemBlock } from '@switchboard/agent';
import type { InstructionSettings } from '@switchboard/core';
import { z } from 'zod';

/**
 * Layered instructions (docs/instructions.md): the gateway's `instructionsFile`, each agent's
 * `instructionsFile` (instead of its `systemPrompt`) and the person's `AGENTS.md` settings.
 */

/** The most an instructions file may hold: it goes out with every model call. */
export const INSTRUCTIONS_FILE_MAX_BYTES = 256 * 1024;

/** `instructionsFile` (top level) and `agents.<id>.instructionsFile`: a path (a relative one is resolved like `gateway.dataDir`). */
export const instructionsFileSchema = z.string().min(1).max(4096).optional();

/** `agentsMd`: the cap of a person's `AGENTS.md` in the prompt, and whether nested ones load. */
export const agentsMdSchema = z
  .strictObject({
    /** The root `AGENTS.md` (and each nested note) is cut at this many bytes. */
    maxBytes: z
      .number()
      .int()
      .min(256)
      .max(256 * 1024)
      .default(16 * 1024),
    /** Nested `AGENTS.md` files load the first time a tool touches their folder. */
    nested: z.boolean().default(true),
  })
  .prefault({});

/** The resolved `agentsMd` settings for core. */
export function instructionSettingsOf(cfg: { agentsMd: { maxBytes: number; nested: boolean } }): InstructionSettings {
  return { agentsMdMaxBytes: cfg.agentsMd.maxBytes, nested: cfg.agentsMd.nested };
}

/** A relative `instructionsFile` resolved against `baseDir` (as `gateway.dataDir` is). */
export function resolveInstructionsPath(path: string | undefined, baseDir: string): string | undefined {
  return path === undefined || isAbsolute(path) ? path : resolve(baseDir, path);
}

/** The text of an instructions file; throws a clear error when it cannot be read or is too large. */
export function readInstructionsFile(path: string, key: string): string {
  let text: Buffer;
  try {
    text = readFileSync(path);
  } catch (err) {
    throw new Error(`${key}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (text.length > INSTRUCTIONS_FILE_MAX_BYTES) throw new Error(`${key}: ${path} is larger than ${INSTRUCTIONS_FILE_MAX_BYTES} bytes`);
  return text.toString('utf8');
}

/**
 * An agent's operator layers, in order: the gateway's `instructionsFile`, then the agent's
 * `instructionsFile` or (without one) its `systemPrompt`. Files are read at start-up.
 */
export function operatorSystem(
  gatewayFile: string | undefined,
  agentId: string,
  agent: { systemPrompt: string; instructionsFile?: string | undefined },
): SystemBlock[] {
  const blocks: SystemBlock[] = [];
  if (gatewayFile !== undefined) blocks.push({ type: 'text', text: readInstructionsFile(gatewayFile, 'instructionsFile') });
  const own = agent.instructionsFile !== undefined ? readInstructionsFile(agent.instructionsFile, `agents.${agentId}.instructionsFile`) : agent.systemPrompt;
  blocks.push({ type: 'text', text: own });
  return blocks.filter((b) => b.text.trim() !== '');
}
