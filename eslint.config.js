// Lint: TypeScript rules everywhere, and the workflow boundary: workflow code is deterministic and bundled for
// the Temporal sandbox, so it may import only @temporalio/workflow and types.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'test-output/**', 'bin/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'workflow code must be deterministic: no Node modules' })),
          patterns: [
            { group: ['ssh2', 'zod', 'commander', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'not in workflow code' },
            // runtime/failures.ts, the failure table, is pure data with no imports (its own rule below): the one value
            // workflows may take from runtime.
            { group: ['../runtime/*', '../runtime/**', '!../runtime/failures.js', '../activities/*', '../activities/**', '../cli/**', '../worker/**'], allowTypeImports: true, message: 'workflows may import only types from runtime/activities (values: only runtime/failures.js)' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'setInterval', message: 'use sleep() from @temporalio/workflow' }],
    },
  },
  {
    // The failure table goes into the workflow bundle: it may import nothing (not even a type from elsewhere).
    files: ['runtime/failures.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['*', '**'], message: 'runtime/failures.ts is pure data: no imports' }] }] },
  },
);
