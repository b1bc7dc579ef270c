export * from './fixture-path.js';
