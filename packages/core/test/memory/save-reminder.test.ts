import type { Message } from '@switchboard/agent';
import { ScriptedModel } from '@switchboard/testkit';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CompactionBreaker } from '../../src/context/compaction-breaker.js';
import { type CompactionContext, DEFAULT_COMPACTION } from '../../src/context/compaction-run.js';
import { compactionShaper } from '../../src/context/compaction-shaper.js';
import type { ContextMeter } from '../../src/context/meter.js';
import { inReminderBand, SAVE_REMINDER_FROM, SAVE_REMINDER_TEXT, withSaveReminder } from '../../src/memory/save-reminder.js';

const signal = new AbortController().signal;
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const WINDOW = 10_000;
const THRESHOLD = DEFAULT_COMPACTION.threshold * WINDOW;

/** A meter that answers `tokens()` for every request (the shaper decides by it). */
function meterOf(tokens: () => number): ContextMeter {
  return { contextWindow: WINDOW + 1_000, window: WINDOW, estimate: () => tokens(), measure: async () => tokens(), observe: () => {} };
}

function shaperWith(tokens: () => number, remindToSave: boolean) {
  const model = new ScriptedModel([]);
  const context: CompactionContext = {
    settings: { ...DEFAULT_COMPACTION },
    model,
    summaryModel: 'm',
    window: WINDOW,
    summaryContextWindow: WINDOW,
    estimate: () => tokens(),
    writer: { transcript: async () => [], append: async () => {} },
    turnId: 't',
    recordCall: () => {},
    notify: async () => {},
    log: pino({ level: 'silent' }),
  };
  return { model, shaper: compactionShaper({ context, meter: meterOf(tokens), breaker: new CompactionBreaker(3), sessionId: 's', remindToSave }) };
}

const hasReminder = (send: readonly Message[]) => JSON.stringify(send).includes(SAVE_REMINDER_TEXT.slice(0, 40));

describe('the save reminder before an auto-compaction', () => {
  it('marks the band just below the threshold', () => {
    expect(inReminderBand(THRESHOLD, THRESHOLD)).toBe(true);
    expect(inReminderBand(SAVE_REMINDER_FROM * THRESHOLD + 1, THRESHOLD)).toBe(true);
    expect(inReminderBand(SAVE_REMINDER_FROM * THRESHOLD, THRESHOLD)).toBe(false);
    expect(inReminderBand(THRESHOLD + 1, THRESHOLD)).toBe(false);
  });

  it('puts the reminder in the last user message of the view, after tool results and before the text (the history is not touched)', () => {
    const send: Message[] = [user('hello'), { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, user('and now')];
    const out = withSaveReminder(send);
    expect(out[2]!.content).toEqual([
      { type: 'text', text: SAVE_REMINDER_TEXT },
      { type: 'text', text: 'and now' },
    ]);
    const results: Message = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'r' },
        { type: 'text', text: 'steered' },
      ],
    };
    expect(withSaveReminder([results])[0]!.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['tool_result', SAVE_REMINDER_TEXT, 'steered']);
    expect(send[2]!.content).toHaveLength(1);
    const endsWithAssistant: Message[] = [user('x'), { role: 'assistant', content: [{ type: 'text', text: 'y' }] }];
    expect(withSaveReminder(endsWithAssistant)).toEqual(endsWithAssistant);
  });

  it('in the band: the first request of the turn carries it, later ones do not; no summary call is made', async () => {
    const tokens = Math.round(0.95 * THRESHOLD);
    const { shaper, model } = shaperWith(() => tokens, true);
    const send = [user('q')];
    const first = await shaper.shape(send, send, { call: 0, model: 'm', signal });
    expect(hasReminder(first.send)).toBe(true);
    expect(first.history).toBeUndefined();
    const second = await shaper.shape(send, send, { call: 1, model: 'm', signal });
    expect(hasReminder(second.send)).toBe(false);
    expect(model.requests).toEqual([]);
  });

  it('not without memory_save, and not far below the threshold', async () => {
    const send = [user('q')];
    const without = shaperWith(() => Math.round(0.95 * THRESHOLD), false);
    expect(hasReminder((await without.shaper.shape(send, send, { call: 0, model: 'm', signal })).send)).toBe(false);
    const low = shaperWith(() => Math.round(0.5 * THRESHOLD), true);
    expect(hasReminder((await low.shaper.shape(send, send, { call: 0, model: 'm', signal })).send)).toBe(false);
  });
});
