/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // The workspace packages from their sources (the "@pds/source" export condition), not a built dist.
  testEnvironmentOptions: { customExportConditions: ['@pds/source', 'node', 'node-addons'] },
  roots: ['<rootDir>/apps', '<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // Prisma's generated client imports its own files with a .js suffix.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Every supertest response is checked against the OpenAPI documents.
  setupFilesAfterEnv: ['<rootDir>/test/openapi-conformance.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
