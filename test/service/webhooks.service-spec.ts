import { OWNER_SCOPES, Scope } from '@app/access';
import { ApiError, ErrorCode } from '@app/errors';
import { WebhooksModule, WebhooksService } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

const WRITE: Scope[] = ['read', 'write'];

describe('webhooks (service tier: WebhooksService on Postgres and Redis, no HTTP, no sender)', () => {
  let factory: ServiceFactory;
  let webhooks: WebhooksService;

  const error = (code: ErrorCode, field?: string) =>
    expect.objectContaining<Partial<ApiError>>(
      field ? { code, details: [{ field, message: expect.any(String) }] } : { code },
    );
  const recover = (accountId: number, webhookId: number, since: Date) =>
    webhooks.recover(accountId, webhookId, { since }, OWNER_SCOPES, 'business');
  /** The resends recover() made: the chain's first delivery each names. */
  const resendsOf = async (accountId: number, webhookId: number) =>
    (
      await factory.db.query(
        `SELECT resend_of::text AS "resendOf" FROM webhook_deliveries
          WHERE account_id = $1 AND webhook_id = $2 AND resend_of IS NOT NULL ORDER BY resend_of`,
        [accountId, webhookId],
      )
    ).map((d: { resendOf: string }) => Number(d.resendOf));
  const aSecondAgo = () => new Date(Date.now() - 1_000);

  beforeAll(async () => {
    factory = await ServiceFactory.start(WebhooksModule);
    webhooks = factory.get(WebhooksService);
  });
  afterAll(() => factory?.close());

  describe('who may subscribe to what', () => {
    it('refuses api_key.* events to a key without admin (insufficient_scope naming events), making no webhook', async () => {
      const accountId = await factory.account();
      await expect(
        factory.webhook(accountId, { events: ['category.created', 'api_key.banned'], scopes: WRITE }),
      ).rejects.toEqual(error('insufficient_scope', 'events'));
      expect(await webhooks.list(accountId, OWNER_SCOPES)).toEqual([]);
    });

    it("refuses a key without admin a change of a webhook's events to api_key.* (insufficient_scope)", async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId, { scopes: WRITE });
      await expect(webhooks.update(accountId, hook.id, { events: ['api_key.created'] }, WRITE)).rejects.toEqual(
        error('insufficient_scope', 'events'),
      );
      expect((await webhooks.get(accountId, hook.id, WRITE)).events).toEqual(['pet.created']);
    });

    it('refuses a key without admin any read or change of a webhook on api_key.* events (insufficient_scope)', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId, { events: ['api_key.revoked'] });
      await expect(webhooks.get(accountId, hook.id, WRITE)).rejects.toEqual(error('insufficient_scope'));
      await expect(
        webhooks.update(accountId, hook.id, { url: 'https://example.com/elsewhere' }, WRITE),
      ).rejects.toEqual(error('insufficient_scope'));
      expect((await webhooks.get(accountId, hook.id, OWNER_SCOPES)).url).toBe('https://example.com/hook');
    });
  });

  describe('the URL guard', () => {
    it('refuses a private address on creation (validation_failed naming url)', async () => {
      const accountId = await factory.account();
      await expect(factory.webhook(accountId, { url: 'http://127.0.0.1:8080/hook' })).rejects.toEqual(
        error('validation_failed', 'url'),
      );
    });

    it('refuses a change of the URL to a private address (validation_failed naming url), keeping the old one', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      await expect(webhooks.update(accountId, hook.id, { url: 'http://10.0.0.1/hook' }, OWNER_SCOPES)).rejects.toEqual(
        error('validation_failed', 'url'),
      );
      expect((await webhooks.get(accountId, hook.id, OWNER_SCOPES)).url).toBe(hook.url);
    });
  });

  describe("another account's webhook", () => {
    it('answers not_found to every read and change, and lists none', async () => {
      const theirs = await factory.account();
      const hook = await factory.webhook(theirs);
      const accountId = await factory.account();
      for (const call of [
        () => webhooks.get(accountId, hook.id, OWNER_SCOPES),
        () => webhooks.update(accountId, hook.id, { description: 'mine' }, OWNER_SCOPES),
        () => webhooks.rotate(accountId, hook.id, 0, OWNER_SCOPES),
        () => webhooks.enable(accountId, hook.id, OWNER_SCOPES),
        () => webhooks.test(accountId, hook.id, OWNER_SCOPES),
        () => webhooks.deliveries(accountId, hook.id, { limit: 10 }, OWNER_SCOPES),
        () => webhooks.remove(accountId, hook.id, OWNER_SCOPES),
      ]) {
        await expect(call()).rejects.toEqual(error('not_found'));
      }
      expect(await webhooks.list(accountId, OWNER_SCOPES)).toEqual([]);
      expect(await webhooks.get(theirs, hook.id, OWNER_SCOPES)).toEqual(expect.objectContaining({ description: null }));
    });

    it("gets no delivery of another account's event", async () => {
      const accountId = await factory.account();
      await factory.webhook(accountId);
      const theirs = await factory.account();
      expect(await factory.fanOut(theirs, [await factory.event(theirs)])).toEqual([]);
    });
  });

  describe('resending a delivery', () => {
    it('makes a new delivery of the event naming the first one, for a resend of a resend too', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      const first = await factory.delivery(accountId, hook.id, { status: 'delivered' });
      const resent = await webhooks.resend(accountId, hook.id, first.id, OWNER_SCOPES);
      const again = await webhooks.resend(accountId, hook.id, resent.id, OWNER_SCOPES);
      expect([resent, again]).toEqual(
        [resent.id, again.id].map((id) =>
          expect.objectContaining({ id, eventId: first.eventId, status: 'pending', resendOf: first.id }),
        ),
      );
    });

    it('refuses an event type the webhook no longer receives (event_not_subscribed)', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId, { events: ['pet.created', 'pet.deleted'] });
      const delivery = await factory.delivery(accountId, hook.id, { type: 'pet.deleted', status: 'failed' });
      await webhooks.update(accountId, hook.id, { events: ['pet.created'] }, OWNER_SCOPES);
      await expect(webhooks.resend(accountId, hook.id, delivery.id, OWNER_SCOPES)).rejects.toEqual(
        error('event_not_subscribed'),
      );
    });
  });

  describe('recovering failed deliveries', () => {
    it('resends each event whose deliveries failed since the time, once, and not the delivered ones', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      const since = aSecondAgo();
      await factory.delivery(accountId, hook.id, { status: 'delivered' });
      const failed = [
        await factory.delivery(accountId, hook.id, { status: 'failed' }),
        await factory.delivery(accountId, hook.id, { status: 'failed' }),
      ];
      expect(await recover(accountId, hook.id, since)).toEqual({ queued: 2, skipped: 0, more: false });
      expect(await recover(accountId, hook.id, since)).toEqual({ queued: 0, skipped: 0, more: false });
      expect(await resendsOf(accountId, hook.id)).toEqual(failed.map((d) => Number(d.id)));
    });

    it('re-enables a disabled webhook', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      await factory.delivery(accountId, hook.id, { status: 'failed' });
      await webhooks.update(accountId, hook.id, { enabled: false }, OWNER_SCOPES);
      await recover(accountId, hook.id, aSecondAgo());
      expect(await webhooks.get(accountId, hook.id, OWNER_SCOPES)).toEqual(
        expect.objectContaining({ status: 'active', disabledAt: null }),
      );
    });

    it('skips the event types the webhook no longer receives, and counts them', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId, { events: ['category.created', 'category.deleted'] });
      const since = aSecondAgo();
      const kept = await factory.delivery(accountId, hook.id, { type: 'category.created', status: 'failed' });
      await factory.delivery(accountId, hook.id, { type: 'category.deleted', status: 'failed' });
      await webhooks.update(accountId, hook.id, { events: ['category.created'] }, OWNER_SCOPES);
      expect(await recover(accountId, hook.id, since)).toEqual({ queued: 1, skipped: 1, more: false });
      expect(await resendsOf(accountId, hook.id)).toEqual([Number(kept.id)]);
    });

    it('does not resend deliveries made before the time', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      await factory.delivery(accountId, hook.id, { status: 'failed' });
      expect(await recover(accountId, hook.id, new Date(Date.now() + 1_000))).toEqual({
        queued: 0,
        skipped: 0,
        more: false,
      });
    });

    it('does not resend again, within the hour, an event a resend of which failed', async () => {
      const accountId = await factory.account();
      const hook = await factory.webhook(accountId);
      const since = aSecondAgo();
      await factory.delivery(accountId, hook.id, { status: 'failed' });
      expect((await recover(accountId, hook.id, since)).queued).toBe(1);
      await factory.db.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE account_id = $1`, [accountId]);
      expect(await recover(accountId, hook.id, since)).toEqual({ queued: 0, skipped: 0, more: false });
    });
  });
});
