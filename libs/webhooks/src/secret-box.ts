import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { SecretKey } from '@app/config';
import { preparedQuery } from '@app/database';
import { webhookQueries, WebhookSecrets } from './webhooks.queries';

const FORMAT = 'v1';
const IV_BYTES = 12; // GCM's standard nonce size; random per seal (2^-32 collision risk only after ~2^32 seals per key)

export class SecretBoxError extends Error {}

// `v1:<keyId>:<iv>:<tag>:<ciphertext>`. The first key seals and any opens, so keys rotate by putting a new one first
// and resealing. The account id is authenticated data: a ciphertext copied to another account's row fails to open.
// A row without `v1:` is a secret stored before encryption: read as is, resealed later.
export class WebhookSecretBox {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: SecretKey[]) {
    if (!keys.length) throw new SecretBoxError('no webhook secret key configured');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  seal(secret: string, accountId: number): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(`webhook-secret:${accountId}`));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [
      FORMAT,
      id,
      iv.toString('base64'),
      cipher.getAuthTag().toString('base64'),
      ciphertext.toString('base64'),
    ].join(':');
  }

  open(stored: string, accountId: number): string {
    if (!stored.startsWith(`${FORMAT}:`)) return stored; // stored before encryption
    const [, id, iv, tag, ciphertext] = stored.split(':');
    const key = this.byId.get(id);
    if (!key) throw new SecretBoxError(`webhook secret sealed under unknown key id ${id}`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(`webhook-secret:${accountId}`));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`webhook secret does not open under key id ${id} (tampered or wrong key)`);
    }
  }

  /** True for a plain-text row or one sealed under a key that no longer comes first. */
  needsReseal(stored: string): boolean {
    return !stored.startsWith(`${FORMAT}:${this.keys[0].id}:`);
  }
}

/** A row changed meanwhile (another process resealing it) is left alone. Returns how many rows changed. */
export async function resealWebhookSecrets(
  manager: EntityManager,
  box: WebhookSecretBox,
  webhookId?: number,
): Promise<number> {
  const rows = await preparedQuery<WebhookSecrets>(manager, webhookQueries.secrets(webhookId ?? null));
  const reseal = (stored: string, accountId: number) => box.seal(box.open(stored, accountId), accountId);
  let changed = 0;
  for (const w of rows) {
    const previousStale = w.previousSecret !== null && box.needsReseal(w.previousSecret);
    if (!box.needsReseal(w.secret) && !previousStale) continue;
    const resealed = await preparedQuery(
      manager,
      webhookQueries.reseal(
        w,
        box.needsReseal(w.secret) ? reseal(w.secret, w.accountId) : w.secret,
        previousStale ? reseal(w.previousSecret!, w.accountId) : w.previousSecret,
      ),
    );
    changed += resealed.length;
  }
  return changed;
}
