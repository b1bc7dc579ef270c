export * from './fake-webhook-platform.js';
export * from './fake-webhook-types.js';
export * from './webhook-signing.js';
