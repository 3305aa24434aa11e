// Lint rules that guard what reviews forget: workflow determinism and type-aware mistakes.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // Plain-JavaScript scripts run on Node (TypeScript files get these from @types/node).
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Workflow code is replayed: no Node built-ins, no I/O libraries, only types from activities.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code must be deterministic: no Node built-ins.' },
            {
              group: ['fs', 'path', 'crypto', 'child_process', 'http', 'https', 'os'],
              message: 'No Node built-ins in workflows.',
            },
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
