import { describe, expect, it } from 'vitest';
import { parseFrame } from '../src/chat/chat-frames';
import { applyFrame, type ChatState, emptyChat, sent, withTranscript } from '../src/chat/chat-state';
import { frameOf } from '../src/chat/frame-of';

const apply = (s: ChatState, ...frames: object[]) =>
  frames.reduce<ChatState>((st, f) => {
    const parsed = parseFrame(JSON.stringify(f));
    if (!parsed) throw new Error(`not a frame: ${JSON.stringify(f)}`);
    return applyFrame(st, parsed);
  }, s);

describe('chat state', () => {
  it('streams deltas into one answer, resets on a retried attempt, and the final replaces the text', () => {
    let s = sent(emptyChat(), 'c1', 'hello');
    s = apply(s, { type: 'accepted', clientId: 'c1', turnId: 't1', duplicate: false }, { type: 'delta', turnId: 't1', clientId: 'c1', text: 'He' });
    expect(s.items.at(-1)).toMatchObject({ role: 'assistant', text: 'He', streaming: true });
    s = apply(s, { type: 'attempt_reset', turnId: 't1', clientId: 'c1' }, { type: 'delta', turnId: 't1', clientId: 'c1', text: 'Hi' });
    expect(s.items.at(-1)).toMatchObject({ text: 'Hi' });
    s = apply(s, { type: 'tool', turnId: 't1', clientId: 'c1', phase: 'start', name: 'read_file', toolUseId: 'u1' });
    s = apply(s, { type: 'final', turnId: 't1', clientId: 'c1', text: 'Hi there', reason: 'completed', cursor: 3 });
    expect(s.cursor).toBe(3);
    expect(s.items.map((i) => [i.role, i.text])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Hi there'],
      ['tool', 'Running read_file…'],
    ]);
    expect(s.stale).toBe(false);
  });

  it('a replayed final of a turn the page never saw asks for the history; the transcript then shows it once', () => {
    let s = apply(emptyChat(), { type: 'final', turnId: 't9', clientId: 'other-tab', text: 'answer', reason: 'completed', cursor: 9 });
    expect(s).toMatchObject({ stale: true, cursor: 9, items: [] });
    s = withTranscript(s, [
      { seq: 1, kind: 'user', turnId: 't9', payload: { content: [{ type: 'text', text: 'question' }] } },
      { seq: 2, kind: 'assistant', turnId: 't9', payload: { content: [{ type: 'text', text: 'answer' }] } },
    ]);
    s = apply(s, { type: 'final', turnId: 't9', clientId: 'other-tab', text: 'answer', reason: 'completed', cursor: 9 });
    expect(s.items.map((i) => i.text)).toEqual(['question', 'answer']);
    expect(s.stale).toBe(false);
  });

  it('an approval is shown once however often it is re-sent, and follows its decision', () => {
    const req = {
      type: 'approval_request',
      approvalId: 'a1',
      turnId: 't1',
      clientId: 'c1',
      tool: 'write_file',
      summary: 'write x',
      expiresAt: 'z',
      source: 'mode',
    };
    let s = apply(emptyChat(), req, req);
    expect(s.items.filter((i) => i.role === 'approval')).toHaveLength(1);
    s = apply(s, { type: 'approval_result', approvalId: 'a1', outcome: 'forbidden' });
    expect(s.items[0]?.approval).toMatchObject({ state: 'pending', note: 'Not decided (forbidden).' });
    s = apply(s, { type: 'approval_resolved', approvalId: 'a1', turnId: 't1', allowed: true, by: 'operator:ops' });
    expect(s.items[0]?.approval).toMatchObject({ state: 'allowed', by: 'operator:ops' });
  });

  it('/new resets the lines; command answers become lines', () => {
    let s = sent(emptyChat(), 'c1', 'x');
    s = apply(s, { type: 'usage', outcome: 'spend', usage: { timezone: 'UTC', periods: [{ period: 'day', tokens: 1200, usd: 0.01, resetsAt: 'z' }] } });
    expect(s.items.at(-1)?.text).toBe('Usage — Today: 1,200 tokens, $0.0100');
    s = apply(s, { type: 'compacted', outcome: 'not_compacted', reason: 'nothing' });
    expect(s.items.at(-1)?.text).toBe('Not compacted: nothing.');
    s = apply(s, { type: 'session_reset' });
    expect(s.items.map((i) => i.text)).toEqual(['New conversation started.']);
  });

  it('the input box: text is a message, /new a new session, other slash words commands', () => {
    expect(frameOf('hello', 'c')).toEqual({ type: 'message', clientId: 'c', text: 'hello' });
    expect(frameOf('/new', 'c')).toEqual({ type: 'new_session' });
    expect(frameOf('/compact keep the names', 'c')).toEqual({ type: 'command', name: 'compact', args: 'keep the names' });
    expect(frameOf('/USAGE', 'c')).toEqual({ type: 'command', name: 'usage' });
    expect(frameOf('/not a command!', 'c')).toEqual({ type: 'command', name: 'not', args: 'a command!' });
    expect(frameOf('/ spaced', 'c')).toEqual({ type: 'message', clientId: 'c', text: '/ spaced' });
  });
});

describe('command answers as lines', () => {
  it('mode, queue and any other answer read as plain text', () => {
    let s = apply(emptyChat(), { type: 'mode_ok', mode: 'plan' }, { type: 'queue_ok', mode: 'steer', sessionId: 's' });
    s = apply(s, { type: 'command_result', command: 'mode', outcome: 'usage', current: 'default', modes: ['plan', 'default'] });
    s = apply(s, { type: 'command_result', command: 'status', outcome: 'status', status: { mode: 'default', messages: 4, nested: { deep: 1 } } });
    s = apply(s, { type: 'command_result', command: 'stop', outcome: 'idle' });
    expect(s.items.map((i) => i.text)).toEqual([
      'Permission mode: plan.',
      'Queue mode: steer.',
      'Permission mode: default (modes: plan, default).',
      '/status: status — status.mode: default, status.messages: 4',
      '/stop: idle',
    ]);
  });
});

describe('history and live lines together', () => {
  it('a message the transcript already has when its `accepted` arrives is shown once', () => {
    let s = sent(emptyChat(), 'c7', 'same message');
    s = withTranscript(s, [{ seq: 1, kind: 'user', turnId: 't7', payload: { content: [{ type: 'text', text: 'same message' }] } }]);
    expect(s.items.map((i) => i.text)).toEqual(['same message', 'same message']);
    s = apply(s, { type: 'accepted', clientId: 'c7', turnId: 't7', duplicate: false });
    expect(s.items.map((i) => [i.key, i.text])).toEqual([['u:h1', 'same message']]);
  });
});
