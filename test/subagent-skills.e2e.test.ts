import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, useGateway } from './helpers.js';
import { firstText, parentRequests, resultIn, scriptRoles, subagentConfig, subagentRequests } from './subagent-helpers.js';

// Issue 16: a loaded skill's `allowed-tools` narrow "from the skill call to the end of that turn, or
// a subagent's whole run". A subagent forks the parent run's skills: it starts with the parent's
// narrowing, and a skill it loads narrows its own run only, never the parent's.

const skillsDir = mkdtempSync(join(tmpdir(), 'swb-subagent-skills-'));
const SKILLS: Record<string, string> = {
  'reading-only': [
    '---',
    'name: reading-only',
    'description: Read files, never list them.',
    'allowed-tools: [read_file, task]',
    '---',
    'READING-ONLY-BODY',
  ].join('\n'),
  'no-writes': ['---', 'name: no-writes', 'description: Look around without writing.', 'allowed-tools: [list_files]', '---', 'NO-WRITES-BODY'].join('\n'),
};
for (const [name, text] of Object.entries(SKILLS)) {
  mkdirSync(join(skillsDir, name), { recursive: true });
  writeFileSync(join(skillsDir, name, 'SKILL.md'), text);
}

const env = useGateway({ config: () => ({ ...subagentConfig(), skills: { dirs: [skillsDir] } }), client: true });

beforeAll(async () => {
  await env.ws.next((f) => f.type === 'hello_ok');
});

async function sidechain(toolUseId: string): Promise<string> {
  const headers = bearer(env.gw.credentials().operatorToken);
  const sessions = (await (await fetch(`${env.gw.url}/api/v1/sessions`, { headers })).json()) as { sessions: Array<{ id: string }> };
  for (const s of sessions.sessions) {
    const res = await fetch(`${env.gw.url}/api/v1/sessions/${s.id}/sidechains/${toolUseId}`, { headers });
    if (res.status === 200) return JSON.stringify(await res.json());
  }
  throw new Error(`no sidechain ${toolUseId}`);
}

describe('subagents and skills', () => {
  it("a subagent starts with the parent's narrowing: a tool outside the parent's loaded skill is denied inside the subagent", async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'List the workspace.';
    scriptRoles(
      fake,
      [
        { toolUses: [{ name: 'skill', id: 'toolu_sk_1', input: { name: 'reading-only' } }] },
        { toolUses: [{ name: 'task', id: 'toolu_task_sk1', input: { description: 'list the files', prompt } }] },
        { text: 'done' },
      ],
      {
        [prompt]: [{ toolUses: [{ name: 'list_files', id: 'toolu_sub_list1', input: { path: '.' } }] }, { text: 'REPORT: listing was refused.' }],
      },
    );
    const turn = await chat(ws, 'sk1', 'use the reading-only skill, then delegate');
    expect(turn.end).toMatchObject({ type: 'final', text: 'done' });
    fake.setHandler(undefined);

    const subs = subagentRequests(fake, start);
    expect(subs).toHaveLength(2);
    expect(firstText(subs[0]!)).toBe(prompt);
    // The subagent is offered the skill tool (general inherits it), so it is told the skills listing.
    expect(JSON.stringify(subs[0]!.body.system)).toContain('reading-only: Read files, never list them.');
    const denied = resultIn(subs[1]!, 'toolu_sub_list1');
    expect(denied?.is_error).toBe(true);
    expect(denied?.content).toContain('reading-only');
    expect(resultIn(parentRequests(fake, start)[2]!, 'toolu_task_sk1')?.content).toBe('REPORT: listing was refused.');
    expect(await sidechain('toolu_task_sk1')).toContain('toolu_sub_list1');
  });

  it("a skill a subagent loads narrows the subagent's run only: the parent's next call outside it still runs", async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'Load no-writes and read a file.';
    scriptRoles(
      fake,
      [
        { toolUses: [{ name: 'task', id: 'toolu_task_sk2', input: { description: 'narrow itself', prompt } }] },
        { toolUses: [{ name: 'read_file', id: 'toolu_parent_read2', input: { path: 'missing.txt' } }] },
        { text: 'parent done' },
      ],
      {
        [prompt]: [
          { toolUses: [{ name: 'skill', id: 'toolu_sub_sk2', input: { name: 'no-writes' } }] },
          { toolUses: [{ name: 'read_file', id: 'toolu_sub_read2', input: { path: 'missing.txt' } }] },
          { text: 'REPORT: reading was refused.' },
        ],
      },
    );
    const turn = await chat(ws, 'sk2', 'delegate, then read');
    expect(turn.end).toMatchObject({ type: 'final', text: 'parent done' });
    fake.setHandler(undefined);

    const subs = subagentRequests(fake, start);
    expect(subs).toHaveLength(3);
    const inSub = resultIn(subs[2]!, 'toolu_sub_read2');
    expect(inSub?.is_error).toBe(true);
    expect(inSub?.content).toContain('no-writes');
    // The parent's read_file is not narrowed by the subagent's skill: it ran (the file is missing, which is its own error).
    const inParent = resultIn(parentRequests(fake, start)[2]!, 'toolu_parent_read2');
    expect(inParent?.content).not.toContain('no-writes');
  });
});
