export * from './channel.js';
export * from './session-key.js';
export * from './storage.js';
