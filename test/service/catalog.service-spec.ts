import { CatalogModule, CategoriesService, PetsService } from '@app/catalog';
import { ApiError, ErrorCode } from '@app/errors';
import { InventoryService, StoreModule } from '@app/store';
import { ServiceFactory } from './service.factory';

describe('catalog (service tier: categories and pets on Postgres, no HTTP)', () => {
  let factory: ServiceFactory;
  let categories: CategoriesService;
  let pets: PetsService;

  const error = (code: ErrorCode, field?: string) =>
    expect.objectContaining<Partial<ApiError>>(
      field ? { code, details: [{ field, message: expect.any(String) }] } : { code },
    );
  const stock = async (accountId: number, petId: number) =>
    (await factory.get(InventoryService).get(accountId, petId)).quantity;
  const eventTypes = async (accountId: number) =>
    (await factory.db.query('SELECT type FROM events WHERE account_id = $1 ORDER BY id', [accountId])).map(
      (e: { type: string }) => e.type,
    );

  beforeAll(async () => {
    factory = await ServiceFactory.start(CatalogModule, StoreModule);
    categories = factory.get(CategoriesService);
    pets = factory.get(PetsService);
  });
  afterAll(() => factory?.close());

  describe('categories', () => {
    it('refuses a name another category of the account has, in any case (category_exists)', async () => {
      const accountId = await factory.account();
      await factory.category(accountId, { name: 'Cats' });
      await expect(categories.create(accountId, { name: 'cATS' })).rejects.toEqual(error('category_exists'));
    });

    it('refuses a rename to a name another category of the account has (category_exists)', async () => {
      const accountId = await factory.account();
      await factory.category(accountId, { name: 'Cats' });
      const birds = await factory.category(accountId, { name: 'Birds' });
      await expect(categories.update(accountId, birds.id, { name: 'CATS' })).rejects.toEqual(error('category_exists'));
      expect(await categories.get(accountId, birds.id)).toEqual(birds);
    });

    it("takes a name another account's category has", async () => {
      await factory.category(await factory.account(), { name: 'Cats' });
      const accountId = await factory.account();
      expect(await categories.create(accountId, { name: 'Cats' })).toEqual({ id: expect.any(Number), name: 'Cats' });
    });

    it('refuses to delete a category pets use (category_in_use) and keeps it', async () => {
      const accountId = await factory.account();
      const fish = await factory.category(accountId);
      await factory.pet(accountId, { categoryId: fish.id });
      await expect(categories.remove(accountId, fish.id)).rejects.toEqual(error('category_in_use'));
      expect(await categories.get(accountId, fish.id)).toEqual(fish);
    });

    it('deletes a category once its last pet is gone', async () => {
      const accountId = await factory.account();
      const fish = await factory.category(accountId);
      const nemo = await factory.pet(accountId, { categoryId: fish.id });
      await pets.remove(accountId, nemo.id);
      await categories.remove(accountId, fish.id);
      await expect(categories.get(accountId, fish.id)).rejects.toEqual(error('not_found'));
    });
  });

  describe('pets', () => {
    it("refuses a pet in another account's category (validation_failed naming categoryId)", async () => {
      const foreign = await factory.category(await factory.account());
      const accountId = await factory.account();
      await expect(pets.create(accountId, { name: 'Stray', categoryId: foreign.id })).rejects.toEqual(
        error('validation_failed', 'categoryId'),
      );
    });

    it("refuses moving a pet into another account's category (validation_failed naming categoryId)", async () => {
      const foreign = await factory.category(await factory.account());
      const accountId = await factory.account();
      const pet = await factory.pet(accountId);
      await expect(pets.update(accountId, pet.id, { categoryId: foreign.id })).rejects.toEqual(
        error('validation_failed', 'categoryId'),
      );
      expect(await pets.get(accountId, pet.id)).toEqual(pet);
    });

    it('creates an available pet with one unit in stock, a sold one with none', async () => {
      const accountId = await factory.account();
      const available = await factory.pet(accountId);
      const sold = await factory.pet(accountId, { status: 'sold' });
      expect([available.status, await stock(accountId, available.id)]).toEqual(['available', 1]);
      expect([sold.status, await stock(accountId, sold.id)]).toEqual(['sold', 0]);
    });

    it('empties the stock of a pet set sold, and gives one unit back to a pet set available', async () => {
      const accountId = await factory.account();
      const pet = await factory.pet(accountId);
      expect((await pets.update(accountId, pet.id, { status: 'sold' })).status).toBe('sold');
      expect(await stock(accountId, pet.id)).toBe(0);
      expect((await pets.update(accountId, pet.id, { status: 'available' })).status).toBe('available');
      expect(await stock(accountId, pet.id)).toBe(1);
    });

    it('refuses to delete a pet with an open order (pet_has_open_orders) and keeps it', async () => {
      const accountId = await factory.account();
      const pet = await factory.pet(accountId, { stock: 1 });
      await factory.order(accountId, { petId: pet.id, shipDate: new Date(Date.now() + 3600_000).toISOString() });
      await expect(pets.remove(accountId, pet.id)).rejects.toEqual(error('pet_has_open_orders'));
      expect((await pets.get(accountId, pet.id)).id).toBe(pet.id);
    });

    it('records an event for each catalog write', async () => {
      const accountId = await factory.account();
      const before = await eventTypes(accountId);
      const category = await factory.category(accountId);
      await categories.update(accountId, category.id, { description: 'changed' });
      const pet = await factory.pet(accountId, { categoryId: category.id });
      await pets.update(accountId, pet.id, { status: 'sold' });
      await pets.remove(accountId, pet.id);
      await categories.remove(accountId, category.id);
      expect((await eventTypes(accountId)).slice(before.length)).toEqual([
        'category.created',
        'category.updated',
        'pet.created',
        'inventory.updated',
        'pet.status_changed',
        'pet.updated',
        'pet.deleted',
        'category.deleted',
      ]);
    });
  });

  describe("another account's rows", () => {
    it("answers not_found for another account's pet and category", async () => {
      const theirs = await factory.account();
      const pet = await factory.pet(theirs);
      const accountId = await factory.account();
      await expect(pets.get(accountId, pet.id)).rejects.toEqual(error('not_found'));
      await expect(pets.update(accountId, pet.id, { name: 'mine' })).rejects.toEqual(error('not_found'));
      await expect(pets.remove(accountId, pet.id)).rejects.toEqual(error('not_found'));
      await expect(categories.get(accountId, pet.categoryId)).rejects.toEqual(error('not_found'));
      await expect(categories.update(accountId, pet.categoryId, { name: 'mine' })).rejects.toEqual(error('not_found'));
      await expect(categories.remove(accountId, pet.categoryId)).rejects.toEqual(error('not_found'));
      expect(await pets.get(theirs, pet.id)).toEqual(pet);
    });

    it("lists none of another account's pets and categories", async () => {
      const theirs = await factory.account();
      await factory.pet(theirs, { name: 'Shared name' });
      const accountId = await factory.account();
      const mine = await factory.pet(accountId, { name: 'Shared name' });
      expect(await pets.list(accountId, { limit: 100 })).toEqual([mine]);
      expect(await pets.list(accountId, { limit: 100, name: 'Shared' })).toEqual([mine]);
      expect((await categories.list(accountId, { limit: 100 })).map((c) => c.id)).toEqual([mine.categoryId]);
    });
  });
});
