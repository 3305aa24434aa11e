import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Integration files that must have the shared stack to themselves: they count what every file's calls
 * add to (the emulator's request log, the workers' metrics, the backfills started since a time), read
 * every object or history of the stack while other files write or delete theirs, or hold sessions open
 * on a schedule of their own. The others run beside each other: each keeps to its own keys, batch ids,
 * task queues, emulators and processes.
 */
const INTEGRATION_ALONE = [
  // (Files that count the service's requests have an emulator of their own instead,
  // test/helpers/own-service.ts, or read their runs' own histories.)
  // The stack's worker metrics (open streams back to 0); the cost meter's counters.
  'metrics',
  'cost',
  // Every object of the bucket searched for personal data other files' calls hold too while they run.
  'redaction',
  // Every history of the stack read, while other files' forget and retention delete theirs.
  'security',
  // A worker killed while sessions are open, on a schedule of the test's own.
  'session-budget',
].map((name) => `test/integration/${name}.test.ts`);

/**
 * How many integration files run at once on the shared stack (`CALLPIPE_TEST_STACK_FILES`, default 1:
 * one project, every file in turn). `npm test` runs two: `integration-alone` first, the files of
 * INTEGRATION_ALONE one after another, then `integration`, the files that share the stack, two at a time. One stack serves both (test/integration/global-setup.ts).
 */
const stackFiles = Math.max(1, Number(process.env.CALLPIPE_TEST_STACK_FILES ?? 1) || 1);

/**
 * Unit, contract and workflow files at once (`CALLPIPE_TEST_WORKERS`, default 2: many wait on ffmpeg,
 * servers or timers rather than on their own process). The second Node line's `node-line` project, run
 * beside the integration projects, takes 1 so that it does not crowd the stack.
 */
const workers = Math.max(1, Number(process.env.CALLPIPE_TEST_WORKERS ?? 2) || 2);

const integration = {
  include: ['test/integration/**/*.test.ts'],
  globalSetup: ['test/integration/global-setup.ts'],
  testTimeout: 300_000,
  hookTimeout: 300_000,
};

const integrationProjects: TestProjectInlineConfiguration[] =
  stackFiles === 1
    ? [{ test: { name: 'integration', ...integration, fileParallelism: false } }]
    : [
        // The files that need the stack alone run first, one at a time: that leaves a core to `npm test`'s
        // other lane (lint, types, unit, contract, workflow), which runs at the same time. (Not group 0:
        // vitest runs files of a single-worker project in group 0 after every other group.)
        {
          test: {
            name: 'integration-alone',
            ...integration,
            include: INTEGRATION_ALONE,
            fileParallelism: false,
            sequence: { groupOrder: 1 },
          },
        },
        {
          test: {
            name: 'integration',
            ...integration,
            exclude: INTEGRATION_ALONE,
            maxWorkers: stackFiles,
            sequence: { groupOrder: 2 },
          },
        },
      ];

// Four kinds of test: fast unit tests with no servers; contract tests against servers each file starts;
// workflow tests with mocked activities on one Temporal dev server (no S3, ffmpeg or emulator); and
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
          maxWorkers: workers,
        },
      },
      {
        // Contract tests: real HTTP against servers the test file starts itself (the emulator), no stack.
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: workers,
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
          maxWorkers: workers,
        },
      },
      {
        // What can differ between Node lines, run on the second one (test/node-line/node-line.smoke.test.ts):
        // the command, ffmpeg through it, DuckDB, and Temporal's core bridge running real workflows on the
        // workflow bundle (one workflow file, with the workflow project's server and bundle).
        test: {
          name: 'node-line',
          include: ['test/node-line/**/*.test.ts', 'test/workflow/events.test.ts'],
          globalSetup: ['test/workflow/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
        },
      },
      ...integrationProjects,
    ],
  },
});
