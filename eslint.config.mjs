import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layering (docs/internals/architecture.md), enforced: which @app libraries each library may
 * import. Platform libraries know no feature; events (the event log) and transactions (the unit of
 * work, which records into it) are what every feature builds on; features import each other only
 * along these edges; apps import libraries, never another app, and they alone import lifecycle
 * (start-up, readiness, shutdown); nobody reaches into a package's internal paths.
 */
const PLATFORM = ['reaches', 'config', 'errors', 'ids', 'redis', 'database', 'observability', 'jobs'];
const LIBRARY_DEPENDENCIES = {
  reaches: [],
  config: [],
  errors: [],
  ids: [],
  redis: ['config', 'reaches'],
  database: ['config', 'errors'],
  observability: ['config', 'ids'],
  jobs: ['config', 'errors', 'redis', 'database', 'observability'],
  lifecycle: ['config', 'redis', 'database', 'jobs'],
  events: PLATFORM,
  transactions: [...PLATFORM, 'events'],
  access: [...PLATFORM, 'transactions', 'events'],
  catalog: [...PLATFORM, 'transactions', 'events'],
  messages: [...PLATFORM, 'transactions', 'events'],
  store: [...PLATFORM, 'transactions', 'events', 'catalog'],
  webhooks: [...PLATFORM, 'transactions', 'events', 'access'],
  usage: [...PLATFORM, 'access'],
};
// The one list of feature modules both apps load: it may import every library but the apps' own.
const APPS_ONLY = ['lifecycle'];
LIBRARY_DEPENDENCIES.features = Object.keys(LIBRARY_DEPENDENCIES).filter((lib) => !APPS_ONLY.includes(lib));
const APPS = ['api', 'worker', 'cli'];
const NULLABLE_OPTIONAL = {
  name: 'class-validator',
  importNames: ['IsOptional'],
  message: "Use IsOptional from @app/errors: class-validator's lets null through non-nullable fields.",
};
const INTERNAL_PATHS = {
  group: [
    'typeorm/*',
    'bullmq/*',
    'ioredis/*',
    'pg/*',
    '@nestjs/*/dist/*',
    '@nestjs/*/constants',
    '@nestjs/*/internal',
    '**/dist/**',
  ],
  message: "A package's internal path: use its public entry point (wrap what it lacks in one small module).",
};
const importRule = (...patterns) => ['error', { paths: [NULLABLE_OPTIONAL], patterns: [INTERNAL_PATHS, ...patterns] }];
const layering = [
  ...Object.entries(LIBRARY_DEPENDENCIES).map(([lib, allowed]) => ({
    files: [`libs/${lib}/src/**/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': importRule({
        group: [
          ...Object.keys(LIBRARY_DEPENDENCIES)
            .filter((other) => other !== lib && !allowed.includes(other))
            .map((other) => `@app/${other}`),
          '**/apps/**',
          '../../*',
          '@app/testing',
        ],
        message: `libs/${lib} may import only @app/${allowed.join(', @app/') || '(none)'} (eslint.config.mjs, docs/internals/architecture.md).`,
      }),
    },
  })),
  ...APPS.map((app) => ({
    files: [`apps/${app}/src/**/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': importRule({
        group: [
          ...APPS.filter((other) => other !== app).flatMap((other) => [`**/apps/${other}/**`, `**/${other}/src/**`]),
          '@app/testing',
        ],
        message: `apps/${app} is transport only: it imports libraries (not @app/testing), never another app.`,
      }),
    },
  })),
  {
    files: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': importRule({
        group: ['**/test/**'],
        message: 'A spec beside the code takes its helpers from @app/testing (libs/testing), not from test/.',
      }),
    },
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'packages/client/src/generated/**',
      'packages/client/dist/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through AppConfig (libs/config).' },
      ],
      'no-restricted-imports': importRule(),
    },
  },
  ...layering,
  {
    files: [
      'libs/config/src/config.ts',
      'libs/testing/src/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read untyped JSON answers; `any` there is honest.
    files: ['test/**/*.ts', '**/*.spec.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
