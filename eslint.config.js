// ESLint with typescript-eslint's recommended rules (no type information, so the whole tree
// lints in seconds): CI runs it beside the typecheck, before the suite.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'web/dist/', 'node_modules/', '.tap/', '.ci/cache/', 'bench/reports/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading underscore says "deliberately unused": a parameter a signature requires, a
      // field taken out of an object by destructuring.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // The layout rule the code keeps by hand: one statement a line, so that no line hides a
      // second one behind the first (a guard's `if (x) return;` is one).
      'max-statements-per-line': ['error', { max: 1 }],
    },
  },
  {
    // Vendors' JSON as it comes off the wire: the dialects and the request path read it, the
    // tests and the bench check it.
    files: ['src/dialects/**', 'src/inference/**', 'test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
