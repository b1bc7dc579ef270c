import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvalRequestMessage, parseApprovalAction, refusalText } from '../src/approvals.js';

const request = { approvalId: 'a1', tool: 'exit_plan_mode', summary: 'Proceed with this plan?\n\n1. do it', expiresAt: '2030-01-01T00:00:00.000Z' };

type Button = { text: { text: string }; action_id: string };
const buttonsOf = (body: ReturnType<typeof approvalRequestMessage>) =>
  ((body.blocks.find((b) => b.type === 'actions')?.elements ?? []) as Button[]).map((b) => [b.text.text, b.action_id]);

describe('slack: plan approval buttons', () => {
  it('a plan shows one Proceed button per offered mode and Keep planning, never Always allow', () => {
    expect(buttonsOf(approvalRequestMessage({ ...request, source: 'plan', choices: ['default', 'acceptEdits'] }))).toEqual([
      ['Proceed (ask before edits)', 'swb_approval:allow:a1'],
      ['Proceed (accept edits)', 'swb_approval:edits:a1'],
      ['Keep planning', 'swb_approval:deny:a1'],
    ]);
    // A person whose ceiling is default is offered default only.
    expect(buttonsOf(approvalRequestMessage({ ...request, source: 'plan', choices: ['default'] })).map(([t]) => t)).toEqual([
      'Proceed (ask before edits)',
      'Keep planning',
    ]);
    // A lowered choice without a button of its own: plain Proceed takes the approval's first choice.
    expect(buttonsOf(approvalRequestMessage({ ...request, source: 'plan', choices: ['dontAsk'] }))).toEqual([
      ['Proceed', 'swb_approval:allow:a1'],
      ['Keep planning', 'swb_approval:deny:a1'],
    ]);
    expect(buttonsOf(approvalRequestMessage({ ...request, tool: 'write_file', source: 'mode' })).map(([t]) => t)).toEqual(['Approve', 'Deny', 'Always allow']);
  });

  it('the edits button asks for acceptEdits; the others carry no mode', () => {
    expect(parseApprovalAction('swb_approval:edits:a1')).toEqual({ approvalId: 'a1', decision: 'allow', always: false, mode: 'acceptEdits' });
    expect(parseApprovalAction('swb_approval:allow:a1')).toEqual({ approvalId: 'a1', decision: 'allow', always: false });
    expect(parseApprovalAction('swb_approval:deny:a1')).toEqual({ approvalId: 'a1', decision: 'deny', always: false });
    expect(refusalText({ outcome: 'invalid', reason: 'choose one of: default' }, new Map())).toBe(
      'That answer does not fit this approval: choose one of: default.',
    );
  });

  it('parses only our action ids, whatever string arrives, and never throws', () => {
    const kinds = ['allow', 'deny', 'always', 'edits'];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.tuple(fc.constantFrom(...kinds, 'Allow', 'edit', '__proto__', ''), fc.string({ maxLength: 230 })).map(([k, id]) => `swb_approval:${k}:${id}`),
        ),
        (actionId) => {
          const parsed = parseApprovalAction(actionId);
          const prefix = 'swb_approval:';
          const rest = actionId.startsWith(prefix) ? actionId.slice(prefix.length) : undefined;
          const colon = rest?.indexOf(':') ?? -1;
          const kind = rest !== undefined && colon >= 0 ? rest.slice(0, colon) : undefined;
          const id = rest !== undefined && colon >= 0 ? rest.slice(colon + 1) : '';
          const ours = kind !== undefined && kinds.includes(kind) && id.length >= 1 && id.length <= 200 && !/[\n\r\u2028\u2029]/.test(id);
          expect(parsed !== null).toBe(ours);
          if (parsed) {
            expect(parsed.approvalId).toBe(id);
            expect(parsed.mode).toBe(kind === 'edits' ? 'acceptEdits' : undefined);
            expect(parsed.always).toBe(kind === 'always');
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
