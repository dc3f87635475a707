import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { PetStatus } from './pet.entity';
import { ApiError } from '@app/errors';
import { Tx } from '@app/events';
import { PET_COLUMNS, PetRow, toPetView } from './views';

/** The status rule (DESIGN.md section 8), in SQL over a pets row aliased `p`. */
const STATUS_RULE = `CASE
  WHEN p.stock > 0 THEN 'available'
  WHEN EXISTS (SELECT 1 FROM orders o WHERE o.account_id = p.account_id AND o.pet_id = p.id AND NOT o.complete)
    THEN 'pending'
  ELSE 'sold' END`;

const READ_PET = `SELECT ${PET_COLUMNS} FROM pets p WHERE p.account_id = $1 AND p.id = $2`;

/** One pet of the account, or 404 `not_found`: what GET /pets/{id} and GET /store/inventory/{id} read. */
export async function readPet(dataSource: DataSource, accountId: number, petId: number): Promise<PetRow> {
  const [pet] = await preparedQuery<PetRow>(dataSource, READ_PET, [accountId, petId]);
  if (!pet) throw ApiError.notFound('Pet');
  return pet;
}

/**
 * Locks the pet's row for the rest of the transaction. Every write that touches a pet's
 * stock, orders or status takes this lock first, so they serialise per pet and always in
 * the same order (pet, then order): no oversell, no deadlock.
 */
export async function lockPet(manager: EntityManager, accountId: number, petId: number): Promise<PetRow | undefined> {
  const [pet] = await preparedQuery<PetRow>(
    manager,
    `SELECT ${PET_COLUMNS} FROM pets p WHERE p.account_id = $1 AND p.id = $2 FOR UPDATE`,
    [accountId, petId],
  );
  return pet;
}

/**
 * Re-derives the pet's status after a write, in the writer's transaction (which holds the
 * pet's row lock), and records pet.status_changed when it changed. The one place the rule
 * is applied, by the API and the worker alike.
 */
export async function syncPetStatus(tx: Tx, accountId: number, petId: number): Promise<PetRow> {
  const [pet] = await preparedQuery<PetRow & { derived: PetStatus }>(
    tx.manager,
    `SELECT ${PET_COLUMNS}, ${STATUS_RULE} AS derived FROM pets p WHERE p.account_id = $1 AND p.id = $2`,
    [accountId, petId],
  );
  const { derived, ...row } = pet;
  if (derived === row.status) return row;
  await preparedQuery(tx.manager, `UPDATE pets SET status = $3, updated_at = now() WHERE account_id = $1 AND id = $2`, [
    accountId,
    petId,
    derived,
  ]);
  const updated = { ...row, status: derived };
  await tx.emit({
    accountId,
    type: 'pet.status_changed',
    resourceType: 'pet',
    resourceId: petId,
    data: { ...toPetView(updated), previousStatus: row.status },
  });
  return updated;
}
