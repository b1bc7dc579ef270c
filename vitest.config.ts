import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    // No test and no process a test spawns may reach beyond loopback (packages/testkit/src/no-egress.ts).
    setupFiles: ['./packages/testkit/dist/no-egress-register.js'],
  },
});
