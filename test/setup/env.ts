// Runs in every e2e test file before any import: the test database (the template each file's own
// copy is made from, see file-stores.ts), never the development one. Override with TEST_DATABASE_URL.
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/petstore_test';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'info';
process.env.LOG_FILE = process.env.TEST_LOG_FILE ?? `${__dirname}/../artifacts/e2e.log`;
// Each test client sends its own X-Forwarded-For, so anonymous (per-address) limits do not
// leak between tests that all come from 127.0.0.1.
process.env.TRUST_PROXY = 'true';
process.env.DEMO_SEED = 'false';
process.env.OUTBOX_RELAY_INTERVAL_MS = '200';
process.env.OUTBOX_RELAY_GRACE_MS = '500';
process.env.JOB_BACKOFF_MS = '200';
process.env.WORKER_PORT = '0';
process.env.PORT = '0';
process.env.METRICS_PORT = '0';
