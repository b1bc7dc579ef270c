import type { FakeAnthropic, RecordedRequest, ScriptedResponse } from '@switchboard/testkit';

/** The marker in the configured `researcher` type's instructions (its requests' system prompt). */
export const RESEARCHER_MARK = 'SUBAGENT-RESEARCHER';
/** The built-in general type's instructions begin so. */
export const GENERAL_MARK = 'You are a subagent';

/** The config fragment of the subagent tests: a `researcher` type beside `general`, `search_files` denied gateway-wide. */
export const subagentConfig = (limits: Record<string, unknown> = {}) => ({
  permissions: { deny: ['search_files'] },
  agents: {
    default: {
      systemPrompt: 'You are a test assistant.',
      subagents: {
        researcher: {
          description: 'Reads files and reports',
          instructions: `${RESEARCHER_MARK}: read what you are asked and report briefly.`,
          // search_files is denied for everyone, write_file is not in the list: neither reaches it.
          tools: { allow: ['read_file', 'list_files', 'search_files', 'task'] },
        },
      },
    },
  },
  subagents: limits,
});

/** Whether a request is a subagent's (its system prompt is a subagent type's instructions). */
export function isSubagentRequest(req: RecordedRequest): boolean {
  const system = JSON.stringify(req.body.system ?? '');
  return system.includes(RESEARCHER_MARK) || system.includes(GENERAL_MARK);
}

/** The text of a request's first message (a subagent's prompt). */
export function firstText(req: RecordedRequest): string {
  const first = req.body.messages?.[0];
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return first.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text as string)
    .join('');
}

/**
 * Scripts the fake for a parent and its subagents: the parent's requests take `parent` in order,
 * a subagent's take the answers queued under its prompt. Anything unscripted falls through (echo).
 */
export function scriptRoles(fake: FakeAnthropic, parent: ScriptedResponse[], sub: Record<string, ScriptedResponse[]>): void {
  fake.setHandler((req) => {
    if (isSubagentRequest(req)) return Object.hasOwn(sub, firstText(req)) ? sub[firstText(req)]!.shift() : undefined;
    return parent.shift();
  });
}

/** The subagents' requests since index `from`. */
export const subagentRequests = (fake: FakeAnthropic, from = 0) => fake.requests.slice(from).filter(isSubagentRequest);
/** The parent's requests since index `from`. */
export const parentRequests = (fake: FakeAnthropic, from = 0) => fake.requests.slice(from).filter((r) => !isSubagentRequest(r));

/** A tool_result block of a request's last message, by tool_use id. */
export function resultIn(req: RecordedRequest, toolUseId: string): { content?: string; is_error?: boolean } | undefined {
  for (const m of req.body.messages ?? []) {
    if (typeof m.content === 'string') continue;
    const hit = m.content.find((b) => b.type === 'tool_result' && b.tool_use_id === toolUseId);
    if (hit) return { content: typeof hit.content === 'string' ? hit.content : JSON.stringify(hit.content), is_error: hit.is_error };
  }
  return undefined;
}
