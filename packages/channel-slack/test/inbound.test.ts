import { describe, expect, it } from 'vitest';
import { mapMessageEvent, slackToPlain } from '../src/inbound.js';

const self = { teamId: 'T1', botUserId: 'UBOT', botId: 'BBOT' };
const im = { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: 'hi &amp; bye', ts: '1.000100' };

describe('mapMessageEvent', () => {
  it('maps a DM: dedupe key team:channel:ts, identity slack:team:user, mentioned, no thread', () => {
    const r = mapMessageEvent(im, 'T1', 'acct', self);
    expect('message' in r && r.message).toMatchObject({
      dedupeKey: 'T1:D1:1.000100',
      channel: 'slack',
      account: 'acct',
      kind: 'dm',
      mentioned: true,
      text: 'hi & bye',
      platformId: '1.000100',
      sender: { identity: 'slack:T1:U1', isBot: false },
      conversation: { channel: 'slack', account: 'acct', id: 'D1', kind: 'dm' },
    });
    expect('message' in r && r.message.conversation.thread).toBeUndefined();
  });

  it('app_mention and message of one mention map to the same dedupe key; our mention is stripped', () => {
    const mention = { type: 'app_mention', channel: 'C1', user: 'U1', text: '<@UBOT> what now?', ts: '2.000100' };
    const message = { ...mention, type: 'message', channel_type: 'channel' };
    const a = mapMessageEvent(mention, 'T1', 'acct', self);
    const b = mapMessageEvent(message, 'T1', 'acct', self);
    expect('message' in a && 'message' in b).toBe(true);
    if (!('message' in a) || !('message' in b)) return;
    expect(a.message.dedupeKey).toBe(b.message.dedupeKey);
    expect([a.message.mentioned, b.message.mentioned]).toEqual([true, true]);
    expect(a.message.text).toBe('what now?');
    expect(a.message.conversation).toMatchObject({ kind: 'room', id: 'C1', thread: '2.000100' });
  });

  it('a channel message without a mention is not mentioned; a thread reply keeps its thread', () => {
    const r = mapMessageEvent(
      { type: 'message', channel_type: 'channel', channel: 'C1', user: 'U1', text: 'hello all', ts: '3.1', thread_ts: '2.000100' },
      'T1',
      'a',
      self,
    );
    expect('message' in r && r.message).toMatchObject({ mentioned: false, conversation: { thread: '2.000100' } });
  });

  it('drops bot messages (ours and others), edits, joins and empty text', () => {
    const drops = [
      { ...im, bot_id: 'B2' },
      { ...im, subtype: 'bot_message', user: undefined },
      { ...im, user: 'UBOT' },
      { ...im, subtype: 'message_changed' },
      { ...im, subtype: 'channel_join' },
      { ...im, text: '<@UBOT>' },
      { type: 'reaction_added' },
    ];
    for (const ev of drops) expect(mapMessageEvent(ev, 'T1', 'a', self)).toHaveProperty('drop');
  });
});

describe('slackToPlain', () => {
  it('spells out links, mentions, channels and entities', () => {
    expect(slackToPlain('<@UBOT> see <https://x.io|the site> in <#C1|general> with <@U2|ann> <!here> a&lt;b', 'UBOT')).toBe(
      'see the site (https://x.io) in #general with @ann @here a<b',
    );
  });
});
