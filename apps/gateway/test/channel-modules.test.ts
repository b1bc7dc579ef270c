import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { boundaryShape, channelAccountShape, type ChannelModule } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CHANNEL_MODULES, channelsSchema } from '../src/config-channels.js';

const fakeModule = {
  type: 'fake',
  accountSchema: z.strictObject({ n: z.number().int().default(1) }),
  createChannels: async () => [],
} satisfies ChannelModule<'fake', z.ZodType>;

/** Bare specifiers a module file imports statically, following its relative imports. */
function staticImports(file: string, seen = new Set<string>()): Set<string> {
  const bare = new Set<string>();
  if (seen.has(file)) return bare;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  // Static `import … from '…'`, `import '…'` and `export … from '…'`; `import('…')` is not matched.
  for (const m of text.matchAll(/^(?:(?:import|export)\s[^;=('"]*?\sfrom\s*|import\s*)['"]([^'"]+)['"]/gm)) {
    const spec = m[1]!;
    if (spec.startsWith('.')) for (const s of staticImports(resolve(dirname(file), spec), seen)) bare.add(s);
    else bare.add(spec);
  }
  return bare;
}

describe('channel modules', () => {
  it('the gateway knows one module per channel package, each type once, in start-up order', () => {
    expect(CHANNEL_MODULES.map((m) => m.type)).toEqual(['websocket', 'telegram', 'slack', 'webhook', 'openai']);
  });

  it("parses each channels.<type> section with that module's account schema", () => {
    const schema = channelsSchema([fakeModule]);
    expect(schema.parse({ fake: { accounts: { a: {}, b: { n: 5 } } } })).toEqual({ fake: { accounts: { a: { n: 1 }, b: { n: 5 } } } });
    expect(schema.parse({})).toEqual({});
    const bad = schema.safeParse({ fake: { accounts: { a: { n: 'x' }, 'bad id': {} } }, other: {} });
    expect(bad.success).toBe(false);
    const issues = bad.error?.issues.map((i) => `${i.code} ${i.path.join('.')}`).sort();
    expect(issues).toEqual(['invalid_key fake.accounts.bad id', 'invalid_type fake.accounts.a.n', 'unrecognized_keys ']);
  });

  it('every account schema extends the core boundary keys, with their defaults', () => {
    const defaults = (shape: Record<string, z.ZodType>) => z.object(shape).parse({});
    const minimal: Record<string, unknown> = {
      websocket: {},
      telegram: { token: '123456:abcdefghijklmnopqrstu' },
      slack: { botToken: 'xoxb-0000000000-abcdefghij', signingSecret: '0123456789abcdef0123' },
      webhook: { secret: '0123456789abcdef', callbackUrl: 'http://127.0.0.1:9/cb' },
      openai: {},
    };
    // Channels whose clients bring client tokens: no rooms, no pairing, dmPolicy allowlist.
    const tokenChannels = new Set(['websocket', 'openai']);
    for (const m of CHANNEL_MODULES) {
      const parsed = m.accountSchema.parse(minimal[m.type]) as Record<string, unknown>;
      const expected = tokenChannels.has(m.type) ? { ...defaults(channelAccountShape), dmPolicy: 'allowlist' } : defaults(boundaryShape);
      expect(Object.fromEntries(Object.keys(expected).map((k) => [k, parsed[k]]))).toEqual(expected);
    }
    // dmPolicy "open" without "*" is refused on every chat account, naming allowFrom.
    for (const m of CHANNEL_MODULES.filter((c) => !tokenChannels.has(c.type))) {
      const r = m.accountSchema.safeParse({ ...(minimal[m.type] as object), dmPolicy: 'open' });
      expect(r.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['allowFrom', 'dmPolicy "open" requires "*" in allowFrom']]);
    }
  });

  it('refuses two modules of one type', () => {
    expect(() => channelsSchema([fakeModule, { ...fakeModule }])).toThrow('two channel modules of type fake');
  });

  it('a package’s ./module entry loads no platform SDK: only zod and workspace packages, statically', () => {
    const require = createRequire(import.meta.url);
    for (const pkg of ['websocket', 'telegram', 'slack', 'webhook', 'openai']) {
      const entry = require.resolve(`@switchboard/channel-${pkg}/module`);
      const bare = [...staticImports(entry)];
      expect(bare.length).toBeGreaterThan(0);
      expect(bare.filter((s) => s !== 'zod' && !s.startsWith('@switchboard/'))).toEqual([]);
      expect(bare.filter((s) => s.startsWith('@switchboard/channel-'))).toEqual([]);
    }
  });
});
