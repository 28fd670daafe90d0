// ESLint (flat config): the recommended JavaScript and typescript-eslint rules over the sources,
// tests, benchmarks and scripts. Type-aware rules are left out to keep `npm test` fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.cache/', 'toolchains/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        performance: 'readonly',
        global: 'readonly',
        structuredClone: 'readonly',
        Headers: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // One concept per file, functions a reader takes in at once (docs/development.md "Running the tests").
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    // The web console's one browser script (served as it is, no build step).
    files: ['assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', EventSource: 'readonly' },
    },
  },
  {
    // CommonJS config files of the tools (dependency-cruiser).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // The bin is CommonJS (bin/package.json): it loads the CommonJS bundle without an ES module entry.
    files: ['bin/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests talk to raw JSON-RPC replies, whose shapes they assert on.
    files: ['tests/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
