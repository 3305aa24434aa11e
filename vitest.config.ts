import { defineConfig } from 'vitest/config';

// Four projects: fast unit tests with no servers; contract tests against servers each file starts; workflow
// tests with mocked activities on one Temporal dev server (no S3, ffmpeg or emulator); and
// integration/end-to-end tests that share one local stack started by the global setup (real Temporal dev
// server, real S3 server, real emulator, real ffmpeg).
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
        // Workflow tests: the real workflows on one Temporal dev server (started with the workflow bundle
        // by the global setup), every activity a mock on a worker of the test's own task queue.
        test: {
          name: 'workflow',
          include: ['test/workflow/**/*.test.ts'],
          globalSetup: ['test/workflow/global-setup.ts'],
          testTimeout: 60_000,
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
