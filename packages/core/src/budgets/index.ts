export * from './types.js';
export { periodWindow, startOfLocalDay, describeInstant, type PeriodWindow } from './period.js';
export { applicableBudgets, effectiveBudgets, mergeSpec, describeBudget, anyBudget, type ApplicableBudget, type Spender } from './limits.js';
export { BudgetService, tokensOf, type BudgetServiceOptions, type BudgetStanding, type PersonalUsage, type PersonalPeriodUsage } from './service.js';
export { BudgetGate, WARN_AT, exceededText, warningText, type BudgetExceededDetail, type BudgetGateOptions, type BudgetTurn } from './gate.js';
export { SpendTracker } from './spend-tracker.js';
export { usageLines, type UsageLines, type UsagePeriodLine } from './usage-lines.js';
