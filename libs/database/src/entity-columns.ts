import { applyDecorators } from '@nestjs/common';
import { Column, ForeignKey, PrimaryGeneratedColumn } from 'typeorm';

// The columns most tables share, declared as the migrations create them (names are Postgres's defaults).

export const IdentityKey = (table: string) =>
  PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: `${table}_pkey`,
  });

export const AccountId = (table: string) =>
  applyDecorators(
    Column('bigint', { name: 'account_id' }),
    ForeignKey('accounts', { name: `${table}_account_id_fkey`, onDelete: 'CASCADE' }),
  );

export const Timestamp = (name: 'created_at' | 'updated_at') => Column('timestamptz', { name, default: () => 'now()' });

/** A check's `column IN (...)` over a constant list, so the list the code uses and the check's are one. */
export function isIn(column: string, values: readonly string[]): string {
  return `${column} IN (${values.map((value) => `'${value}'`).join(', ')})`;
}
