export * from './channel.js';
export * from './session-key.js';
export * from './storage.js';
export * from './async-queue.js';
export * from './transcript.js';
export * from './engine.js';
export * from './errors.js';
export * from './permissions/index.js';
