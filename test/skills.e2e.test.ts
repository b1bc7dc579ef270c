import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  buildTestConfig,
  CANARY_ANTHROPIC_KEY,
  connectWs,
  runCli,
  startFakeAnthropic,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
  type WsClient,
} from '@switchboard/testkit';
import { bearer, chat, connectPerson } from './helpers.js';

// Issue 16, acceptance 4 (skills): two skills in the gateway's skill dir are listed by name and
// description only; `skill` loads one body; disabling one for the member role through the control
// API removes it from members' next request; a skill with broken front matter is skipped and
// reported by `doctor`; `allowed-tools` narrows while the skill is in use and resets at the next
// turn. Plus the attacks on the read-only folder allowance (a symlink out of a skill folder, a
// folder of a skill that was not loaded, a write into a loaded skill's folder).

let fake: FakeAnthropic;
let gw: GatewayProcess;
let op: string;
let owner: WsClient;
let member: WsClient;
let turn = 0;
let root: string;
let skillsDir: string;
let notesDir: string;
let releaseDir: string;
const SECRET = 'OUTSIDE-SECRET-7f3a91';

const NOTES_SKILL = `---
name: notes-helper
description: Keeps meeting notes tidy, as bullet lists.
allowed-tools: [read_file]
license: MIT
---

NOTES-BODY: write every note as a bullet list, newest first.
`;
const RELEASE_SKILL = `---
name: release-checklist
description: |
  Steps for cutting a release
  of the gateway.
---
RELEASE-BODY: run the tests, tag, publish.
`;
const BROKEN_SKILL = `---
name: [broken
description: never loads
---
BROKEN-BODY
`;

/** The exact system block the first request carries (quoted in the report). */
const LISTING =
  "Skills. The gateway's operator installed these skills: instructions for particular tasks, loaded on demand. " +
  "When a task matches a skill's description, call the skill tool with its name before you start, and follow what it returns.\n" +
  '- notes-helper: Keeps meeting notes tidy, as bullet lists.\n' +
  '- release-checklist: Steps for cutting a release of the gateway.';

type Block = { type: string; text?: string; tool_use_id?: string; is_error?: boolean; content?: unknown };

/** The tool_result of `id` in the request that answered it (the one after `from`). */
function resultOf(id: string, from = 0): Block & { text: string } {
  for (const req of fake.requests.slice(from)) {
    const last = req.body.messages.at(-1);
    const found = Array.isArray(last?.content) ? (last.content as Block[]).find((b) => b.type === 'tool_result' && b.tool_use_id === id) : undefined;
    if (!found) continue;
    const c = found.content;
    const text = typeof c === 'string' ? c : Array.isArray(c) ? (c as { text?: string }[]).map((b) => b.text ?? '').join('\n') : '';
    return { ...found, text };
  }
  throw new Error(`no tool_result for ${id}`);
}

/** The system text blocks of a request. */
const systemOf = (i: number) => (fake.requests[i]!.body.system as { text: string }[]).map((b) => b.text);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'swb-skills-'));
  skillsDir = join(root, 'skills');
  notesDir = join(skillsDir, 'notes-helper');
  releaseDir = join(skillsDir, 'release-checklist');
  for (const d of [notesDir, releaseDir, join(skillsDir, 'broken')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(notesDir, 'SKILL.md'), NOTES_SKILL);
  writeFileSync(join(notesDir, 'template.md'), 'TEMPLATE-CONTENT\n');
  writeFileSync(join(releaseDir, 'SKILL.md'), RELEASE_SKILL);
  mkdirSync(join(releaseDir, 'steps'));
  writeFileSync(join(releaseDir, 'steps', 'tag.md'), 'git tag\n');
  writeFileSync(join(root, 'secret.txt'), `${SECRET}\n`);
  symlinkSync(join(root, 'secret.txt'), join(releaseDir, 'escape.md'));
  writeFileSync(join(skillsDir, 'broken', 'SKILL.md'), BROKEN_SKILL);
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url, config: { skills: { dirs: [skillsDir] } } });
  op = gw.credentials().operatorToken;
  owner = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  member = (await connectPerson(gw, 'm1', 'member')).ws;
  notesDir = realpathSync(notesDir);
  releaseDir = realpathSync(releaseDir);
});
afterAll(async () => {
  await owner?.close();
  await member?.close();
  await stopAllGateways();
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

describe('skills listed, loaded and switched', () => {
  it('the first request lists both skills by name and description only, after the layered prompt', async () => {
    const before = fake.requests.length;
    const res = await chat(owner, `s${++turn}`, 'hello');
    expect(res.end.type).toBe('final');
    expect(fake.requests.length).toBe(before + 1);
    const system = systemOf(before);
    expect(system.at(-1)).toBe(LISTING);
    // Name and description only: no body, no broken skill, no folder path.
    const sent = JSON.stringify(fake.requests[before]!.body);
    for (const absent of ['NOTES-BODY', 'RELEASE-BODY', 'BROKEN', 'never loads', skillsDir]) expect(sent).not.toContain(absent);
    expect((fake.requests[before]!.body.tools as { name: string }[]).map((t) => t.name)).toContain('skill');
  });

  it('the capability registry lists the two skills (kind skill), not the broken one', async () => {
    const res = await api(gw, 'GET', '/api/v1/capabilities?kind=skill', { token: op });
    expect(res.status).toBe(200);
    const caps = res.json.capabilities as { id: string; kind: string; source: string; description: string; detail: Record<string, unknown> }[];
    expect(caps.map((c) => c.id)).toEqual(['skill:notes-helper', 'skill:release-checklist']);
    expect(caps[0]).toMatchObject({
      kind: 'skill',
      source: 'skills.dirs',
      detail: { name: 'notes-helper', allowedTools: ['read_file'], agents: '*' },
      disabledAt: [],
    });
  });

  it('`skill` loads one body, fenced as operator-provided instructions', async () => {
    const before = fake.requests.length;
    fake.enqueue({ toolUses: [{ id: 'toolu_load', name: 'skill', input: { name: 'release-checklist' } }] }, { text: 'loaded' });
    const res = await chat(member, `s${++turn}`, 'cut a release');
    expect(res.end.type).toBe('final');
    const result = resultOf('toolu_load', before);
    expect(result.is_error).toBeFalsy();
    expect(result.text).toContain('<skill name="release-checklist">');
    expect(result.text).toContain('RELEASE-BODY: run the tests, tag, publish.');
    expect(result.text).toContain("The gateway's operator provided these instructions");
    // Its files are listed (symbolic links are not).
    expect(result.text).toContain('Files: steps/tag.md\n');
  });

  it("disabling a skill for the member role removes it from members' next request (and refuses loading it); owners keep it", async () => {
    const off = await api(gw, 'PUT', '/api/v1/capabilities/skill:notes-helper', { token: op, body: { scope: { kind: 'role', id: 'member' }, enabled: false } });
    expect(off.status).toBe(200);
    expect(off.json).toMatchObject({ changed: true, capability: { disabledAt: [{ kind: 'role', id: 'member' }] } });

    let before = fake.requests.length;
    fake.enqueue({ toolUses: [{ id: 'toolu_hidden_skill', name: 'skill', input: { name: 'notes-helper' } }] }, { text: 'ok' });
    await chat(member, `s${++turn}`, 'tidy my notes');
    const listing = systemOf(before).at(-1)!;
    expect(listing).toContain('- release-checklist:');
    expect(listing).not.toContain('notes-helper');
    const refused = resultOf('toolu_hidden_skill', before);
    expect(refused.is_error).toBe(true);
    expect(refused.text).not.toContain('NOTES-BODY');

    before = fake.requests.length;
    await chat(owner, `s${++turn}`, 'hello');
    expect(systemOf(before).at(-1)).toBe(LISTING);

    const on = await api(gw, 'PUT', '/api/v1/capabilities/skill:notes-helper', { token: op, body: { scope: { kind: 'role', id: 'member' }, enabled: true } });
    expect(on.json).toMatchObject({ changed: true, capability: { disabledAt: [] } });
    before = fake.requests.length;
    await chat(member, `s${++turn}`, 'hello');
    expect(systemOf(before).at(-1)).toBe(LISTING);
  });
});

describe('allowed-tools narrows for the rest of the turn', () => {
  it('a tool outside it is denied naming the skill (a write is denied, not asked); the skill folder is readable; the next turn is back to normal', async () => {
    const before = fake.requests.length;
    fake.enqueue(
      { toolUses: [{ id: 'toolu_notes', name: 'skill', input: { name: 'notes-helper' } }] },
      {
        toolUses: [
          { id: 'toolu_tpl', name: 'read_file', input: { path: join(notesDir, 'template.md') } },
          { id: 'toolu_ls', name: 'list_files', input: {} },
        ],
      },
      { toolUses: [{ id: 'toolu_write', name: 'write_file', input: { path: 'notes.md', content: 'x' } }] },
      { text: 'done' },
    );
    const res = await chat(owner, `s${++turn}`, 'tidy my notes');
    expect(res.end.type).toBe('final');
    expect(res.frames.some((f) => f.type === 'approval')).toBe(false);
    expect(resultOf('toolu_notes', before).text).toContain('Allowed tools while this skill is in use (until the end of this turn): read_file');
    const tpl = resultOf('toolu_tpl', before);
    expect(tpl.is_error).toBeFalsy();
    expect(tpl.text).toContain('TEMPLATE-CONTENT');
    for (const id of ['toolu_ls', 'toolu_write']) {
      const denied = resultOf(id, before);
      expect(denied.is_error).toBe(true);
      expect(denied.text).toContain('while the skill "notes-helper" is in use');
    }

    const next = fake.requests.length;
    fake.enqueue({ toolUses: [{ id: 'toolu_ls2', name: 'list_files', input: {} }] }, { text: 'listed' });
    await chat(owner, `s${++turn}`, 'what is in my workspace?');
    const again = resultOf('toolu_ls2', next);
    expect(again.is_error).toBeFalsy();
    expect(again.text).not.toContain('notes-helper');
  });
});

describe('the read-only allowance opens only the loaded skill folder', () => {
  it('a symlink out of the folder, a folder of a skill not loaded and a write into the loaded folder are all refused', async () => {
    const before = fake.requests.length;
    fake.enqueue(
      { toolUses: [{ id: 'toolu_rel', name: 'skill', input: { name: 'release-checklist' } }] },
      {
        toolUses: [
          { id: 'toolu_escape', name: 'read_file', input: { path: join(releaseDir, 'escape.md') } },
          { id: 'toolu_other', name: 'read_file', input: { path: join(notesDir, 'template.md') } },
          { id: 'toolu_outside', name: 'read_file', input: { path: join(root, 'secret.txt') } },
          { id: 'toolu_own', name: 'read_file', input: { path: join(releaseDir, 'SKILL.md') } },
        ],
      },
      { toolUses: [{ id: 'toolu_plant', name: 'write_file', input: { path: join(releaseDir, 'planted.md'), content: 'x' } }] },
      { text: 'done' },
    );
    const res = await chat(owner, `s${++turn}`, 'release');
    expect(res.end.type).toBe('final');
    for (const id of ['toolu_escape', 'toolu_other', 'toolu_outside', 'toolu_plant']) {
      const refused = resultOf(id, before);
      expect(refused.is_error, id).toBe(true);
      expect(refused.text).not.toContain(SECRET);
      expect(refused.text).not.toContain('TEMPLATE-CONTENT');
    }
    expect(resultOf('toolu_escape', before).text).toContain("outside the skill's folder");
    expect(resultOf('toolu_own', before).text).toContain('RELEASE-BODY');
    expect(existsSync(join(releaseDir, 'planted.md'))).toBe(false);
    expect(res.frames.some((f) => f.type === 'approval')).toBe(false);

    // The allowance ends with the turn.
    const next = fake.requests.length;
    fake.enqueue({ toolUses: [{ id: 'toolu_late', name: 'read_file', input: { path: join(releaseDir, 'SKILL.md') } }] }, { text: 'ok' });
    await chat(owner, `s${++turn}`, 'read it again');
    expect(resultOf('toolu_late', next).is_error).toBe(true);
  });
});

describe('a restart in the middle of a turn', () => {
  it("keeps the loaded skill's narrowing (and its folder) for the rest of the resumed turn", async () => {
    const before = fake.requests.length;
    // The second reply's tool_use makes the skill's result durable; the crash comes during the third.
    fake.enqueue(
      { toolUses: [{ id: 'toolu_r_skill', name: 'skill', input: { name: 'notes-helper' } }] },
      { toolUses: [{ id: 'toolu_r_tpl', name: 'read_file', input: { path: join(notesDir, 'template.md') } }] },
      { holdAfterEvents: 1, text: 'never finished' },
    );
    owner.send({ type: 'message', clientId: `s${++turn}`, text: 'tidy my notes, then list' });
    await fake.waitForRequests(before + 3);
    await gw.kill('SIGKILL');
    fake.release();
    fake.enqueue({ toolUses: [{ id: 'toolu_r_ls', name: 'list_files', input: {} }] }, { text: 'after restart' });
    gw = await gw.restart();
    await fake.waitForRequests(before + 5);
    // The read-only call cut off by the crash ran again, inside the skill's folder.
    expect(resultOf('toolu_r_tpl', before + 3).text).toContain('TEMPLATE-CONTENT');
    const denied = resultOf('toolu_r_ls', before + 3);
    expect(denied.is_error).toBe(true);
    expect(denied.text).toContain('while the skill "notes-helper" is in use');
  });
});

describe('switchboard doctor', () => {
  it('reports the skill with broken front matter (and counts the good ones)', async () => {
    const file = join(root, 'doctor.json');
    writeFileSync(file, JSON.stringify(buildTestConfig(join(root, 'doctor-data'), fake.url, { skills: { dirs: [skillsDir] } })));
    const r = await runCli(['doctor', '--config', file], { env: { ANTHROPIC_API_KEY: CANARY_ANTHROPIC_KEY } });
    expect(r.stdout).toContain('✓ skills: 2 loaded from 1 directory');
    expect(r.stdout).toMatch(/✗ skill \S+\/skills\/broken loads — front matter is not valid YAML/u);
    expect(r.stdout).toContain('fix: fix its SKILL.md');
    expect(r.code).toBeGreaterThanOrEqual(1);
  });
});
