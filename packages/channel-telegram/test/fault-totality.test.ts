import fc from 'fast-check';
import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { updateFacts } from '../src/dead-letter.js';
import {
  apiErrorCode,
  describeError,
  isMessageGone,
  isNotModified,
  isParseError,
  isPermanentAuthError,
  networkCause,
  retryAfter,
  scrubToken,
} from '../src/errors.js';
import { conversationOf, inboundText, isMentioned, mediaBytes, mediaKind, parseCommand, toInbound } from '../src/inbound.js';
import { updateSchema } from '../src/update-schema.js';

const TOKEN = '123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ';

/** Any value a library or a peer might throw, including hostile objects. */
const thrown: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  fc.string().map((m) => new Error(m)),
  fc.record({ message: fc.anything(), code: fc.anything(), name: fc.anything() }, { requiredKeys: [] }),
  fc.constant(Object.create(null) as unknown),
);

/** grammY errors built from arbitrary envelopes (JSON, as on the wire): `{ok:false}` with any (or no) fields. */
const grammyError = fc.record({ error_code: fc.jsonValue(), description: fc.jsonValue(), parameters: fc.jsonValue() }, { requiredKeys: [] }).map((env) => {
  // grammY's constructor interpolates the envelope's fields: one like {"toString":1} makes the
  // constructor itself throw, and that TypeError is what the caller then sees instead.
  try {
    return new GrammyError("Call to 'sendChatAction' failed!", { ok: false, ...env } as never, 'sendChatAction', {});
  } catch (err) {
    return err;
  }
});

const httpError = thrown.map((inner) => new HttpError(`Network request for 'getMe' failed!`, inner as never));

describe('Telegram error describers are total', () => {
  it('never throw, always return token-free text, for any thrown value, GrammyError or HttpError', () => {
    fc.assert(
      fc.property(fc.oneof(thrown, grammyError, httpError), (err) => {
        const text = describeError(err, TOKEN);
        expect(typeof text).toBe('string');
        expect(text).not.toContain(TOKEN);
        apiErrorCode(err);
        retryAfter(err);
        networkCause(err);
        isNotModified(err);
        isParseError(err);
        isMessageGone(err);
        isPermanentAuthError(err);
      }),
      { numRuns: 500 },
    );
  });

  it('a hostile thrown value (throwing getters and prototype) is described, not thrown on', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('hostile getter');
        },
        getPrototypeOf: () => {
          throw new Error('hostile prototype');
        },
      },
    );
    expect(describeError(hostile, TOKEN)).toBe('(an error that cannot be described)');
    expect(scrubToken(hostile, hostile)).toBe('(an error that cannot be described)');
    expect(networkCause(hostile)).toBeUndefined();
  });

  it('the shape that crashed the gateway: {ok:false} without description or parameters', () => {
    const err = new GrammyError("Call to 'sendChatAction' failed!", { ok: false } as never, 'sendChatAction', {});
    expect(describeError(err, TOKEN)).toBe('error: (no description)');
    expect(retryAfter(err)).toBeUndefined();
    expect(isNotModified(err)).toBe(false);
  });

  it('scrubToken accepts anything and removes the token and token-shaped text', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (text, token) => {
        expect(typeof scrubToken(text, token)).toBe('string');
      }),
    );
    expect(scrubToken(`x ${TOKEN} y`, TOKEN)).toBe('x [bot token] y');
    expect(scrubToken(undefined, TOKEN)).toBe('(no description)');
  });

  it('networkCause names the errno and host of a fetch failure', () => {
    const inner = Object.assign(new Error(`request to http://127.0.0.1:9/bot${TOKEN}/getMe failed, reason: connect ECONNREFUSED 127.0.0.1:9`), {
      code: 'ECONNREFUSED',
    });
    const err = new HttpError(`Network request for 'getMe' failed!`, inner);
    expect(networkCause(err)).toEqual({ host: '127.0.0.1', cause: 'ECONNREFUSED' });
    expect(describeError(err, TOKEN)).not.toContain(TOKEN);
    const dns = new HttpError('x', Object.assign(new Error('getaddrinfo ENOTFOUND api.telegram.org'), { code: 'ENOTFOUND', hostname: 'api.telegram.org' }));
    expect(networkCause(dns)).toEqual({ host: 'api.telegram.org', cause: 'ENOTFOUND' });
  });
});

describe('Telegram inbound parsers are total', () => {
  const bot = { id: 42, username: 'swb_bot' };
  const json = fc.jsonValue();
  /** Updates that look roughly right, with arbitrary JSON in every field. */
  const updateLike = fc.record(
    {
      update_id: fc.oneof(fc.integer(), json),
      message: fc.record(
        {
          message_id: fc.oneof(fc.integer(), json),
          chat: fc.record({ id: fc.oneof(fc.integer(), json), type: fc.oneof(fc.constantFrom('private', 'group', 'supergroup'), json) }, { requiredKeys: [] }),
          from: json,
          text: fc.oneof(fc.string(), json),
          entities: json,
          caption: json,
          document: json,
          photo: json,
        },
        { requiredKeys: [] },
      ),
      callback_query: json,
    },
    { requiredKeys: [] },
  );

  it('updateFacts never throws on any JSON', () => {
    fc.assert(
      fc.property(fc.oneof(json, updateLike, fc.anything()), (raw) => {
        const f = updateFacts(raw);
        expect(typeof f.dedupeKey).toBe('string');
        expect(typeof f.summary).toBe('string');
      }),
      { numRuns: 500 },
    );
  });

  it('updateSchema rejects rather than throws, and whatever it accepts the inbound helpers handle', () => {
    fc.assert(
      fc.property(fc.oneof(json, updateLike), (raw) => {
        const parsed = updateSchema.safeParse(raw);
        if (!parsed.success || !parsed.data.message) return;
        const m = parsed.data.message;
        conversationOf('main', m);
        mediaBytes(m);
        mediaKind(m);
        parseCommand(m);
        isMentioned(m, bot, [/assistant/i]);
        inboundText(m, bot);
        if (m.from) toInbound(parsed.data.update_id, { ...m, from: m.from }, 'main', bot, []);
      }),
      { numRuns: 500 },
    );
  });
});
