// Lint rules that guard what reviews forget: workflow determinism, type-aware promise mistakes, and the
// layering of docs/design.md (which folder may import which; no import cycles).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import imports from './scripts/eslint-plugin-imports.mjs';

// docs/design.md, Layout: the folders of ours each top-level folder may import ('*': all). Folders not listed
// here (scripts/, bin/) are plain tooling, free to import and be imported.
const IMPORT_TABLE = {
  root: import.meta.dirname,
  allow: {
    workflows: ['schemas'],
    activities: ['service', 'schemas'],
    service: ['schemas'],
    emulator: ['schemas'],
    workers: ['workflows', 'activities', 'service', 'emulator', 'schemas'],
    schemas: [],
    cli: ['*'],
    test: ['*'],
    bench: ['*'],
  },
  // Workflow code is bundled and replayed: from activities it takes their types only.
  allowTypes: { workflows: ['activities'] },
};

// Every Node built-in, with and without the node: scheme, so a new one cannot slip into a workflow.
const nodeBuiltins = builtinModules.filter((name) => !name.startsWith('_'));

// One home for each retry decision (docs/retries.md): a failure's type and whether it is retried come from
// the retry table through `failureOf` (activities/failure.ts) or `workflowFailureOf`
// (workflows/failure-reason.ts); an activity's retry policy from workflows/activity-policies.ts.
const FAILURE_SITES = ['activities/failure.ts', 'workflows/failure-reason.ts'];
const POLICY_SITES = ['workflows/activity-policies.ts'];
const PRODUCT_CODE = ['activities', 'workflows', 'workers', 'service', 'schemas', 'cli', 'emulator'].map(
  (dir) => `${dir}/**/*.ts`,
);
const NO_FAILURE_HERE = [
  {
    selector:
      "MemberExpression[object.name='ApplicationFailure'][property.name=/^(create|retryable|nonRetryable|fromError)$/]",
    message:
      'Build failures with failureOf (activities/failure.ts) or workflowFailureOf, from a retry-table type.',
  },
  {
    selector: "NewExpression[callee.name='ApplicationFailure']",
    message:
      'Build failures with failureOf (activities/failure.ts) or workflowFailureOf, from a retry-table type.',
  },
];
const NO_POLICY_HERE = [
  {
    selector: "Property[key.name='retry'] > ObjectExpression",
    message: 'Activity retry policies live in workflows/activity-policies.ts: name one of its policies.',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.callpipe/**', '.test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A promise nobody awaits loses its error (an unhandled rejection kills a worker); a promise where a
    // boolean or a void callback is expected is always truthy or never awaited.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    plugins: { imports },
    rules: {
      'imports/import-table': ['error', IMPORT_TABLE],
      'imports/no-cycle': ['error', { root: IMPORT_TABLE.root }],
    },
  },
  {
    // Plain-JavaScript scripts run on Node (TypeScript files get these from @types/node).
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', fetch: 'readonly', AbortSignal: 'readonly' },
    },
  },
  {
    // The pages' scripts run in a browser (inlined into call.html and report.html), with uPlot loaded.
    files: ['activities/pages/client/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        getComputedStyle: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        uPlot: 'readonly',
      },
    },
  },
  {
    // Code for the next engineer: no function over 100 lines (blank lines and comments counted), outside
    // bench/. In tests too: a describe that outgrows it splits by what it tests, a long test into helpers
    // named for what they check. A module-wrapping IIFE (the pages' browser scripts) is no function in
    // that sense.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    ignores: ['bench/**'],
    rules: { 'max-lines-per-function': ['error', { max: 100, IIFEs: false }] },
  },
  {
    files: PRODUCT_CODE,
    ignores: [...FAILURE_SITES, ...POLICY_SITES],
    rules: { 'no-restricted-syntax': ['error', ...NO_FAILURE_HERE, ...NO_POLICY_HERE] },
  },
  { files: FAILURE_SITES, rules: { 'no-restricted-syntax': ['error', ...NO_POLICY_HERE] } },
  { files: POLICY_SITES, rules: { 'no-restricted-syntax': ['error', ...NO_FAILURE_HERE] } },
  {
    // Workflow code is replayed: no Node built-ins, no I/O libraries, only types from activities.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({
              name,
              message: 'Workflow code must be deterministic: no Node built-ins.',
            })),
            {
              name: '@temporalio/workflow',
              importNames: ['patched', 'deprecatePatch'],
              message:
                'No patches: a change ships as a new build under Worker Versioning (docs/architecture.md, "Shipping a workflow change").',
            },
          ],
          patterns: [
            { group: ['node:*'], message: 'Workflow code must be deterministic: no Node built-ins.' },
            {
              group: ['@aws-sdk/*', 'p-limit', 'csv-parse', '@temporalio/client', '@temporalio/worker'],
              message: 'No I/O libraries in workflows.',
            },
          ],
        },
      ],
    },
  },
);
