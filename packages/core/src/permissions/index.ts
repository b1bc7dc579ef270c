/**
 * The action layer of access control (DESIGN §1): the pure decision core of the permission
 * pipeline — rules, content matchers, aliases, scopes, modes, safety checks, hook runners,
 * denial tracking and `decidePermission`, which ties them together. Persistence, approvals and
 * transport live elsewhere and build on this API.
 *
 * @module
 */
export * from './errors.js';
export * from './rules.js';
export * from './aliases.js';
export * from './path-glob.js';
export * from './matchers.js';
export * from './scopes.js';
export * from './modes.js';
export * from './scope-modes.js';
export * from './safety.js';
export * from './hook-runners.js';
export * from './hooks.js';
export * from './denials.js';
export * from './pipeline.js';
export * from './pre-filter.js';
export * from './real-path.js';
export * from './walk-filter.js';
export * from './ask-source.js';
export * from './literal.js';
export * from './exact-rule.js';
export * from './always-rule.js';
export * from './rule-text.js';
