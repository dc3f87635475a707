import { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, API keys, the transactional outbox and the domain event log. */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        plan text NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
        limit_per_minute integer CHECK (limit_per_minute > 0),
        limit_per_day integer CHECK (limit_per_day > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT enterprise_has_limits CHECK (
          plan <> 'enterprise' OR (limit_per_minute IS NOT NULL AND limit_per_day IS NOT NULL)
        )
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name text NOT NULL,
        prefix text NOT NULL,
        key_hash text NOT NULL,
        scopes text[] NOT NULL CHECK (scopes <@ ARRAY['read', 'write']::text[] AND cardinality(scopes) > 0),
        expires_at timestamptz,
        revoked_at timestamptz,
        rotated_out_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash)`);
    await q.query(`CREATE INDEX api_keys_account_id ON api_keys (account_id, id)`);
    await q.query(`
      CREATE TABLE outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        queue text NOT NULL,
        job_name text NOT NULL,
        job_id text NOT NULL,
        payload jsonb NOT NULL,
        run_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX outbox_created_at ON outbox (created_at, id)`);
    await q.query(`
      CREATE TABLE events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type text NOT NULL,
        resource_type text NOT NULL,
        resource_id text NOT NULL,
        sequence integer NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX events_account_id ON events (account_id, id)`);
    await q.query(`CREATE INDEX events_account_type ON events (account_id, type, id)`);
    await q.query(
      `CREATE UNIQUE INDEX events_resource_sequence ON events (account_id, resource_type, resource_id, sequence)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP TABLE outbox`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE accounts`);
  }
}
