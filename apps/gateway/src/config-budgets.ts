import { type BudgetSettings, type BudgetSpec, isTimeZone, ROLES } from '@switchboard/core';
import { z } from 'zod';

/** One period's limit: `tokens` (input + output + cache read + cache write) and/or `usd`; either blocks. */
export const budgetLimitSchema = z
  .strictObject({
    tokens: z.number().int().min(0).max(1e15).optional(),
    usd: z.number().min(0).max(1e9).optional(),
  })
  .refine((l) => l.tokens !== undefined || l.usd !== undefined, { message: 'a limit needs "tokens" or "usd"' });

/** A budget: `{ day?, month? }` (the control API's PUT body has the same shape). */
export const budgetSpecSchema = z.strictObject({ day: budgetLimitSchema.optional(), month: budgetLimitSchema.optional() });

const id = z.string().min(1).max(200);

/**
 * `budgets` (docs/budgets.md): per day and per month, in tokens and/or USD, for the whole gateway,
 * each agent, each role (the default of each of its principals, counted per principal) and each
 * principal (overrides its role's default). Days and months start at 00:00 in `timezone`.
 * Nothing is limited unless a budget is set here or through the control API.
 */
export const budgetsSchema = z
  .strictObject({
    timezone: z.string().refine(isTimeZone, 'expected an IANA time zone such as "UTC" or "Europe/Berlin"').default('UTC'),
    gateway: budgetSpecSchema.optional(),
    agents: z.record(id, budgetSpecSchema).default({}),
    roles: z.partialRecord(z.enum(ROLES), budgetSpecSchema).default({}),
    principals: z.record(id, budgetSpecSchema).default({}),
  })
  .prefault({});

/** The `budgets` section as parsed. */
export type BudgetsConfig = z.output<typeof budgetsSchema>;

const clean = (spec: z.output<typeof budgetSpecSchema>): BudgetSpec => ({
  ...(spec.day ? { day: spec.day } : {}),
  ...(spec.month ? { month: spec.month } : {}),
});

const mapOf = (record: Readonly<Partial<Record<string, z.output<typeof budgetSpecSchema>>>>): Map<string, BudgetSpec> =>
  new Map(Object.entries(record).flatMap(([k, v]) => (v ? [[k, clean(v)] as const] : [])));

/** The section as core's resolved {@link BudgetSettings}. */
export function budgetSettings(cfg: BudgetsConfig): BudgetSettings {
  return {
    timezone: cfg.timezone,
    ...(cfg.gateway ? { gateway: clean(cfg.gateway) } : {}),
    agents: mapOf(cfg.agents),
    roles: mapOf(cfg.roles),
    principals: mapOf(cfg.principals),
  };
}
