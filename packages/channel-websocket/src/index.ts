export * from './account.js';
export * from './command-frames.js';
export * from './create-channels.js';
export * from './frames.js';
export * from './module.js';
export * from './upgrades.js';
export * from './unauthenticated-caps.js';
export * from './websocket-channel.js';
