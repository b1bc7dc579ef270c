import { clientFrame } from '@switchboard/channel-websocket';
import { approvalDecisionSchema } from '@switchboard/channel-webhook';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { approvalDecisionBody } from '../src/api/approvals.js';

const MODES = ['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'then'];

/** One field's rule, written out independently of the zod schemas. */
type FieldRule = { required: boolean; ok: (v: unknown) => boolean };

const isMode = (v: unknown) => typeof v === 'string' && MODES.includes(v);
const isDecision = (v: unknown) => v === 'allow' || v === 'deny';
const isBool = (v: unknown) => typeof v === 'boolean';

/** Whether `v` is a well-formed body under `rules`: an object with only these keys, each valid, the required ones present. */
function wellFormed(v: unknown, rules: Record<string, FieldRule>): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  if (keys.some((k) => !Object.hasOwn(rules, k))) return false;
  const o = v as Record<string, unknown>;
  return Object.entries(rules).every(([k, r]) => (keys.includes(k) ? r.ok(o[k]) : !r.required));
}

/** Near-valid and hostile bodies: every field missing, mistyped, oversized, a prototype key or a stray key. */
function hostile(extra: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const field = (good: fc.Arbitrary<unknown>) => fc.oneof(good, fc.anything(), fc.constantFrom('', 'x'.repeat(600), null, 0, [], {}));
  return fc.oneof(
    fc.record(
      {
        decision: field(fc.constantFrom('allow', 'deny', 'ALLOW', 'always')),
        always: field(fc.boolean()),
        mode: field(fc.constantFrom(...MODES, 'auto', 'Default', ...PROTO_KEYS)),
        ...extra,
        [PROTO_KEYS[0]!]: fc.anything(),
        stray: fc.anything(),
      },
      { requiredKeys: [] },
    ),
    fc.record({ decision: fc.constantFrom('allow', 'deny'), mode: fc.constantFrom(...MODES), ...extra }, { requiredKeys: ['decision'] }),
    fc.anything(),
  );
}

/** Parses JSON-carried values only (what arrives on the wire); the verdict must match the oracle and never throw. */
function agrees(schema: z.ZodType, rules: Record<string, FieldRule>, arb: fc.Arbitrary<unknown>) {
  const seen = { valid: 0, invalid: 0 };
  fc.assert(
    fc.property(arb, (raw) => {
      let value: unknown;
      try {
        value = JSON.parse(JSON.stringify(raw) ?? 'null');
      } catch {
        return;
      }
      const valid = wellFormed(value, rules);
      seen[valid ? 'valid' : 'invalid']++;
      expect(schema.safeParse(value).success).toBe(valid);
    }),
    { numRuns: 600 },
  );
  expect(seen.valid).toBeGreaterThan(0);
  expect(seen.invalid).toBeGreaterThan(0);
}

describe('approval decision bodies with a plan mode choice (hostile shapes)', () => {
  it('the control API body: decision, optional always, reason (≤ 500) and mode', () => {
    const reason = { required: false, ok: (v: unknown) => typeof v === 'string' && v.length <= 500 };
    agrees(
      approvalDecisionBody,
      { decision: { required: true, ok: isDecision }, always: { required: false, ok: isBool }, mode: { required: false, ok: isMode }, reason },
      hostile({ reason: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('r'.repeat(501)), fc.anything()) }),
    );
    expect(approvalDecisionBody.parse({ decision: 'allow' })).toEqual({ decision: 'allow', always: false });
  });

  it('the WebSocket approve frame: approvalId (1–64), decision, optional always and mode', () => {
    const approvalId = { required: true, ok: (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 64 };
    agrees(
      clientFrame,
      {
        type: { required: true, ok: (v) => v === 'approve' },
        approvalId,
        decision: { required: true, ok: isDecision },
        always: { required: false, ok: isBool },
        mode: { required: false, ok: isMode },
      },
      hostile({
        type: fc.oneof(fc.constant('approve'), fc.anything()),
        approvalId: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constant(''), fc.constant('a'.repeat(65)), fc.anything()),
      }).map((v) => (typeof v === 'object' && v !== null && !Array.isArray(v) && !('type' in v) ? { type: 'approve', ...v } : v)),
    );
  });

  it('the webhook decision: decision, senderId, optional always and mode', () => {
    const probe = approvalDecisionSchema.safeParse({ decision: 'allow', senderId: 'u1', mode: 'acceptEdits' });
    expect(probe.success).toBe(true);
    const senderOk = (v: unknown) => approvalDecisionSchema.safeParse({ decision: 'allow', senderId: v }).success;
    agrees(
      approvalDecisionSchema,
      {
        decision: { required: true, ok: isDecision },
        always: { required: false, ok: isBool },
        mode: { required: false, ok: isMode },
        senderId: { required: true, ok: senderOk },
      },
      hostile({ senderId: fc.oneof(fc.constant('u1'), fc.anything()) }),
    );
  });
});
