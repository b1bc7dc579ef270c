export * from './frames.js';
export * from './upgrades.js';
export * from './unauthenticated-caps.js';
export * from './websocket-channel.js';
