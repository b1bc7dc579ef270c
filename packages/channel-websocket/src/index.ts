export * from './frames.js';
export * from './websocket-channel.js';
