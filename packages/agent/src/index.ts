export * from './messages.js';
export * from './errors.js';
export * from './tool.js';
export * from './events.js';
export * from './model.js';
export * from './anthropic-model.js';
export * from './tool-exec.js';
export * from './query.js';
