import type { RedisClient } from '@app/redis';
import { Command, json, print, withApp } from './cli-command';

/** One-off steps after an upgrade, each safe to run again. */
export const UPGRADE_COMMANDS: Record<string, Command> = {
  'webhook:reseal-secrets': {
    synopsis: '[--json]',
    summary: 'encrypt webhook secrets stored in plain text or under an older WEBHOOK_SECRET_KEYS key',
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AppConfig, DataSource, resealWebhookSecrets, WebhookSecretBox }) => {
        const box = new WebhookSecretBox(get(AppConfig).webhookSecretKeys);
        const changed = await resealWebhookSecrets(get(DataSource).manager, box);
        print(io, values, { resealed: changed }, `${changed} webhook secret(s) resealed`);
      }),
  },
  'queues:drop-old-layout': {
    synopsis: '[--json]',
    summary: "after upgrading, remove the queues' keys of the old layout (petstore:<queue>:*)",
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { dropOldKeyLayout, EventQueue, FulfilmentQueue, MessageQueue, REDIS, WebhookQueue }) => {
        // The queues of the release that had the old layout.
        const queues = [MessageQueue, FulfilmentQueue, EventQueue, WebhookQueue];
        const removed = await dropOldKeyLayout(get<RedisClient>(REDIS), queues);
        print(io, values, { removed }, `${removed} key(s) of the old queue layout removed`);
      }),
  },
};
