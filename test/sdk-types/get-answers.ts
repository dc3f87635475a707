// What a user's `tsc --strict` learns from the SDK's `get` methods, checked by test/e2e/sdk/sdk-get.e2e-spec.ts
// with this folder's tsconfig.json (strict, and noUncheckedIndexedAccess over the SDK's own source, so an
// element read from a list cannot pass for one that exists). Each `get` answers its model, never
// `undefined`: a missing record is thrown as PetstoreError `not_found`, which the spec checks at run time.
import type {
  Account,
  Category,
  InventoryItem,
  MessageDetail,
  Order,
  Pet,
  PetstoreClient,
  Webhook,
} from '@petstore/client';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type Answer<F> = F extends (...args: never[]) => Promise<infer T> ? T : never;

export type GetAnswers = [
  Expect<Equal<Answer<PetstoreClient['pets']['get']>, Pet>>,
  Expect<Equal<Answer<PetstoreClient['pets']['getById']>, Pet>>,
  Expect<Equal<Answer<PetstoreClient['categories']['get']>, Category>>,
  Expect<Equal<Answer<PetstoreClient['orders']['get']>, Order>>,
  Expect<Equal<Answer<PetstoreClient['inventory']['get']>, InventoryItem>>,
  Expect<Equal<Answer<PetstoreClient['messages']['get']>, MessageDetail>>,
  Expect<Equal<Answer<PetstoreClient['webhooks']['get']>, Webhook>>,
  Expect<Equal<Answer<PetstoreClient['account']['get']>, Account>>,
];

/** What the user wrote: strict mode accepts it, so it must not meet `undefined` at run time. */
export async function firstFields(c: PetstoreClient): Promise<unknown[]> {
  return [
    (await c.pets.get(1)).name,
    (await c.categories.get(1)).name,
    (await c.orders.get(1)).petId,
    (await c.inventory.get(1)).quantity,
    (await c.messages.get('msg_0')).status,
    (await c.webhooks.get(1)).url,
  ];
}

export async function refused(c: PetstoreClient): Promise<void> {
  // @ts-expect-error a pet's answer is a Pet: it cannot be taken for `undefined`
  const none: undefined = await c.pets.get(1);
  // @ts-expect-error messages are found by their string id
  await c.messages.get(1);
  void none;
}
