// What TypeORM cannot express, left to the migrations by the drift check; the entity says so too (`synchronize:
// false` on the table or index), and the check fails when they disagree.
export interface SchemaException {
  table: string;
  /** Only this index of the table; the whole table when absent. */
  index?: string;
  why: string;
}

const PARTITIONED = 'time-partitioned: TypeORM cannot declare partitions or their keys';

export const SCHEMA_EXCEPTIONS: readonly SchemaException[] = [
  { table: 'messages', why: PARTITIONED },
  { table: 'events', why: PARTITIONED },
  { table: 'webhook_deliveries', why: PARTITIONED },
  { table: 'usage_minutes', why: PARTITIONED },
  { table: 'categories', index: 'categories_account_name', why: 'expression index: (account_id, lower(name))' },
  {
    table: 'pets',
    index: 'pets_account_name_trgm',
    why: 'GIN index with an operator class: (account_id, lower(name) gin_trgm_ops)',
  },
  { table: 'orders', index: 'orders_open_due', why: 'expression index: (coalesce(ship_date, created_at), id)' },
];
