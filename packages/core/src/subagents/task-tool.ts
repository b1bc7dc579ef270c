import type { AnyTool, Tool } from '@switchboard/agent';
import { z } from 'zod';
import { TASK_TOOL } from '../tool-status.js';
import { GENERAL_SUBAGENT } from './types.js';

const input = z.strictObject({
  description: z.string().trim().min(1).max(120).describe('A short label of the task (3-7 words), shown to the person'),
  prompt: z.string().min(1).max(100_000).describe('The whole task for the subagent: it sees nothing of this conversation but this text'),
  type: z.string().min(1).max(64).optional().describe(`The subagent type; default "${GENERAL_SUBAGENT}"`),
});

/** One subagent type as the `task` tool's description lists it. */
export interface TaskTypeListing {
  name: string;
  description: string;
}

/**
 * The `task` tool: hands a self-contained task to a subagent (docs/subagents.md) that works in its
 * own context on the same loop; only its final report comes back. The call itself changes nothing
 * (every call the subagent makes is checked by the permission pipeline on its own), so it runs
 * without asking and in plan mode — but it is not `readOnly`: a restart cuts its subagent off, and
 * the parent is told so instead of the call running again. Concurrency-safe: several tasks of one
 * reply run in parallel.
 */
export function createTaskTool(types: readonly TaskTypeListing[]): AnyTool {
  const listing = types.map((t) => `- ${t.name}: ${t.description}`).join('\n');
  const tool: Tool<z.infer<typeof input>> = {
    name: TASK_TOOL,
    description:
      'Delegates a self-contained task to a subagent with its own fresh context (it does not see this conversation). ' +
      'Use it for research or multi-step work whose details you do not need, only its result. ' +
      'Write the prompt so it stands alone. Several task calls in one reply run in parallel.\n' +
      `Subagent types:\n${listing}`,
    input,
    readOnly: false,
    concurrencySafe: true,
    async checkPermissions() {
      return { behavior: 'passthrough', access: 'read' };
    },
    ruleContent: (i) => i.type ?? GENERAL_SUBAGENT,
    async call(request, ctx) {
      if (!ctx.subagent) {
        return { content: 'Subagents are not available here (a subagent cannot start another one). Do the work yourself.', isError: true };
      }
      return ctx.subagent(request.type === undefined ? { description: request.description, prompt: request.prompt } : request, ctx);
    },
  };
  return tool as AnyTool;
}
