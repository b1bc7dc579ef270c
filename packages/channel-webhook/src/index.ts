export * from './callback-client.js';
export * from './create-channels.js';
export * from './replay-memory.js';
export * from './signing.js';
export * from './webhook-channel.js';
export * from './webhook-routes.js';
export * from './wire.js';
