import { MigrationInterface, QueryRunner } from 'typeorm';

// Keyed by account first, so each tenant-scoped query and keyset page is an index range scan; composite foreign
// keys keep a pet's category inside its account.
export class CatalogAndStore1763720000000 implements MigrationInterface {
  name = 'CatalogAndStore1763720000000';

  async up(q: QueryRunner): Promise<void> {
    // Trigram index for the case-insensitive substring filter on pet names.
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE categories (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        description text CHECK (length(description) <= 1000),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Unique so pets can reference (account_id, id); also the keyset index of the list.
    await q.query(`CREATE UNIQUE INDEX categories_account_id ON categories (account_id, id)`);
    await q.query(`CREATE UNIQUE INDEX categories_account_name ON categories (account_id, lower(name))`);

    await q.query(`
      CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        category_id bigint NOT NULL,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        status text NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
        stock integer NOT NULL CHECK (stock >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pets_category_fk FOREIGN KEY (account_id, category_id)
          REFERENCES categories (account_id, id)
      )`);
    await q.query(`CREATE INDEX pets_account_id ON pets (account_id, id)`);
    await q.query(`CREATE INDEX pets_account_status ON pets (account_id, status, id)`);
    await q.query(`CREATE INDEX pets_account_category ON pets (account_id, category_id, id)`);
    await q.query(`CREATE INDEX pets_name_trgm ON pets USING gin (lower(name) gin_trgm_ops)`);

    // No foreign key to pets: a completed order stays readable after its pet is deleted
    // (deleting a pet with open orders is refused by the service under the pet's row lock).
    await q.query(`
      CREATE TABLE orders (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        pet_id bigint NOT NULL,
        quantity integer NOT NULL CHECK (quantity > 0),
        ship_date timestamptz,
        complete boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX orders_account_id ON orders (account_id, id)`);
    await q.query(`CREATE INDEX orders_account_complete ON orders (account_id, complete, id)`);
    await q.query(`CREATE INDEX orders_account_pet ON orders (account_id, pet_id, id)`);
    // The status rule ("has open orders") and the fulfilment sweep look only at open orders.
    await q.query(`CREATE INDEX orders_open_by_pet ON orders (account_id, pet_id) WHERE NOT complete`);
    await q.query(`CREATE INDEX orders_open_due ON orders ((coalesce(ship_date, created_at)), id) WHERE NOT complete`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE orders`);
    await q.query(`DROP TABLE pets`);
    await q.query(`DROP TABLE categories`);
  }
}
