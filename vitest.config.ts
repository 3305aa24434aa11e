import { defineConfig } from 'vitest/config';

// Two projects: fast unit tests with no servers, and integration/end-to-end tests that share one local
// stack started by the global setup (real Temporal dev server, real S3 server, real emulator, real ffmpeg).
export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
          // Fixtures are generated with real ffmpeg in beforeAll hooks: slow on a loaded 2-core machine.
          hookTimeout: 120_000,
        },
      },
      {
        // Contract tests: real HTTP against servers the test file starts itself (the emulator), no stack.
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          // The machine has 2 cores and the stack is shared: files run one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
