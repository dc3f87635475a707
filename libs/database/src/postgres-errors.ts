import { DatabaseError } from 'pg';

/** A statement refused by the unique constraint `constraint` (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  return err instanceof DatabaseError && err.code === '23505' && err.constraint === constraint;
}
