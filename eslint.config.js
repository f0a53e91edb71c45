import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// expect(...) itself (which also starts every expect(...).toBe(...) chain), expect.soft and expect.poll;
// not the asymmetric matchers (expect.any, expect.closeTo), which are values, not assertions.
const EXPECT =
  ":matches(CallExpression[callee.name='expect'], CallExpression[callee.object.name='expect'][callee.property.name=/^(soft|poll)$/])";

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-output/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules for the many async paths: a promise nobody awaits or handles, or one passed
    // where a plain callback is expected, loses its errors.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // An assertion that runs only sometimes lets a test pass without checking anything: in tests,
    // no expect under a condition, and none where a caught exception makes it optional.
    files: ['test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['IfStatement', 'ConditionalExpression', 'LogicalExpression', 'SwitchStatement'].map((guard) => ({
          selector: `${guard} ${EXPECT}`,
          message:
            'expect under a condition (if, ?:, &&, ||, ??, switch) may never run: split the test, assert the condition itself, or compute the value and assert it unconditionally.',
        })),
        {
          selector: `TryStatement[handler] > BlockStatement.block ${EXPECT}`,
          message:
            'expect inside a try with a catch: a failed expect throws, and the catch can swallow it. Catch into a variable and assert after the try.',
        },
        {
          selector: `CatchClause ${EXPECT}`,
          message:
            'expect inside a catch runs only if something throws: catch into a variable, then assert on it after the try.',
        },
        {
          selector: `CallExpression[callee.property.name=/^(catch|then)$/] > :function ${EXPECT}`,
          message:
            'expect inside a .catch/.then callback runs only on that outcome: await the value, then assert on it.',
        },
      ],
      // One way to wait for what a test cannot be told of: test/helpers/until.ts.
      'no-restricted-properties': [
        'error',
        {
          object: 'expect',
          property: 'poll',
          message: 'wait with until (test/helpers/until.ts), the suite’s one polling helper.',
        },
      ],
    },
  },
  {
    // A function reads as its steps: one past 80 lines is split into named ones that say what they do.
    files: ['src/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    // Only the CLI, the bench and the bin shim talk to the terminal.
    files: ['src/cli/**', 'bench/**', 'bin/**'],
    rules: { 'no-console': 'off' },
  },
);
