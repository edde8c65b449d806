// Lint: TypeScript rules everywhere, and the rooms (docs/ARCHITECTURE.md). Each room's import rule is one
// no-restricted-imports entry (flat config replaces a rule's options per file, so a nested room repeats its
// parent's patterns): workflow code is deterministic and bundled for the Temporal sandbox, so it may import only
// @temporalio/workflow and types; runtime is the plain library under every room; runtime/model, the shared
// vocabulary, imports nothing outside itself; activities import no cli/worker/workflows and the worker no cli;
// the CLI's commands never import each other; no product code imports the tests (the simulator lives only under
// test/). Dynamic import() is not seen by this rule: test/unit/import-graph.test.ts checks the same rooms on the
// whole import graph.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const noTests = { regex: '^(\\.\\./)+test/', message: 'product code never imports the tests or the simulator' };
const runtimeRoom = [
  { regex: '^(\\.\\./)+(cli|activities|worker|workflows)(/|$)', message: 'runtime is the library under every room: it imports only runtime and packages' },
  { group: ['@temporalio/*'], message: 'runtime knows nothing of Temporal (that is activities, worker, workflows and cli)' },
  noTests,
];
const restrict = (...patterns) => ['error', { patterns }];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'test-output/**', 'bin/**', 'bench/results/**', '.stryker-tmp/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: { 'no-restricted-imports': restrict(noTests) },
  },
  {
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': restrict({ regex: '^(\\.\\./)+(cli|worker|workflows)(/|$)', message: 'activities import runtime only: the worker wires them, the workflows call them through a type' }, noTests) },
  },
  {
    files: ['worker/**/*.ts'],
    rules: { 'no-restricted-imports': restrict({ regex: '^(\\.\\./)+cli(/|$)', message: 'the worker never imports the CLI (the CLI starts the worker, not the reverse)' }, noTests) },
  },
  {
    files: ['cli/commands/**/*.ts'],
    rules: { 'no-restricted-imports': restrict({ regex: '^\\./', message: 'a command never imports another: share through cli/ (deploy-client, deploy-view, render-text)' }, noTests) },
  },
  {
    // The deploy client is the CLI's Temporal side (connect, start, follow, workers): it returns data and writes only
    // to the printer it is handed, so it takes nothing but types from the rest of cli/ (the views sit above it).
    files: ['cli/deploy-client/**/*.ts'],
    rules: { 'no-restricted-imports': restrict({ regex: '^\\.\\./(?!\\.\\./)', allowTypeImports: true, message: 'cli/deploy-client takes only types from the rest of cli/: the views and printers call it, never the reverse' }, noTests) },
  },
  {
    files: ['runtime/**/*.ts'],
    rules: { 'no-restricted-imports': restrict(...runtimeRoom) },
  },
  {
    files: ['runtime/model/**/*.ts'],
    rules: { 'no-restricted-imports': restrict({ regex: '^(?!\\./)', message: 'runtime/model is the bottom room: it imports nothing outside runtime/model' }) },
  },
  {
    // The failure table and the time format go into the workflow bundle: they may import nothing (not even a type).
    files: ['runtime/failures.ts', 'runtime/format.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['*', '**'], message: 'bundled into the workflows: no imports' }] }] },
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
            // The values workflows may take from runtime: runtime/failures.ts (the failure table), runtime/format.ts (the
            // time format) and runtime/steps/catalog.ts (the step catalog), all import-free apart from types (their own
            // rules below).
            {
              regex: '^\\.\\./(runtime/(?!(failures|format|steps/catalog)\\.js$)|activities/|cli/|worker/)',
              allowTypeImports: true,
              message: 'workflows may import only types from runtime/activities (values: only runtime/failures.js, runtime/format.js and runtime/steps/catalog.js)',
            },
            noTests,
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'setInterval', message: 'use sleep() from @temporalio/workflow' }],
    },
  },
  {
    // The step catalog is bundled into the workflows: it stays import-free (types only) and deterministic.
    files: ['runtime/steps/catalog.ts'],
    rules: {
      'no-restricted-imports': restrict(...runtimeRoom, { regex: '.', allowTypeImports: true, message: 'the step catalog imports only types (the workflow bundle takes its code)' }),
    },
  },
);
