import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/generated/**', '**/dist/**', '**/coverage/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // Type-checked rules on the TypeScript sources: a promise is awaited, returned or explicitly voided.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  // The code every request or every record runs through: on Node 20's V8 an object literal with anything
  // after a spread (`{ ...a, b }`) takes the runtime's slow path; one such literal in serveRoute cost the
  // cheapest route a third of its CPU (docs/performance.md, "Spreads on the request path").
  {
    files: [
      'packages/http/src/routing/**/*.ts',
      'packages/http/src/{access-log,body,strings}.ts',
      'packages/tokens/src/cache.ts',
      'packages/db/src/{sql,batch,data,data-changes,outbox,events,files}.ts',
      'apps/gateway/src/{pipeline,cors}.ts',
      'apps/gateway/src/auth/{service,accounts}.ts',
      'apps/gateway/src/instances/registry.ts',
      'apps/gateway/src/data/{service,access,input}.ts',
      'apps/gateway/src/files/service.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement ~ *',
          message: 'Nothing after a spread on the request path: name the fields, put the spread last, or use Object.assign.',
        },
      ],
    },
  },
  { files: ['scripts/**', 'apps/dex/src/cli.ts'], rules: { 'no-console': 'off' } },
  { files: ['**/*.cjs', '**/*.js'], languageOptions: { sourceType: 'commonjs', globals: globals.node } },
  { files: ['**/*.mjs'], languageOptions: { sourceType: 'module', globals: globals.node } },
);
