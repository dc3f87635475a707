import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { PetStatus } from './pet.entity';
import { ApiError } from '@app/errors';
import { Tx } from '@app/transactions';
import { petQueries, PetRow } from './catalog.queries';
import { toPetView } from './views';

/** One pet of the account, or 404 `not_found`: what GET /pets/{id} and GET /store/inventory/{id} read. */
export async function readPet(dataSource: DataSource, accountId: number, petId: number): Promise<PetRow> {
  const [pet] = await preparedQuery<PetRow>(dataSource, petQueries.get(accountId, petId));
  if (!pet) throw ApiError.notFound('Pet');
  return pet;
}

/**
 * Locks the pet's row for the rest of the transaction. Every write that touches a pet's
 * stock, orders or status takes this lock first, so they serialise per pet and always in
 * the same order (pet, then order): no oversell, no deadlock.
 */
export async function lockPet(manager: EntityManager, accountId: number, petId: number): Promise<PetRow | undefined> {
  const [pet] = await preparedQuery<PetRow>(manager, petQueries.lock(accountId, petId));
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
    petQueries.derivedStatus(accountId, petId),
  );
  const { derived, ...row } = pet;
  if (derived === row.status) return row;
  await preparedQuery(tx.manager, petQueries.setStatus(accountId, petId, derived));
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
