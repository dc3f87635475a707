import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ApiKeyAuthenticator, KeyUnusable, unusableBecause, usableUntil } from '@app/access';
import { ApiError } from '@app/errors';
import { EventStreams, KeyStanding } from '@app/events';

const ENDED: Record<KeyUnusable, string> = {
  revoked: 'The API key was revoked; this stream has ended',
  expired: 'The API key expired; this stream has ended',
  rotated_out: "The API key's rotation grace period ended; this stream has ended: use its replacement",
};

/**
 * Open streams answer for their key on every replica: each invalidation a replica applies (its own, or heard from
 * another over pub/sub) has the streams of that key, or account, ask Postgres where the key stands.
 */
@Injectable()
export class StreamKeyWatch implements OnModuleInit, OnModuleDestroy {
  private unwatch?: () => void;

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly streams: EventStreams,
  ) {}

  onModuleInit(): void {
    // A message from a release before keyId names a hash only: every stream here asks.
    this.unwatch = this.authenticator.watch(
      (msg) => void this.streams.recheck(msg.keyId !== undefined ? { keyId: msg.keyId } : { accountId: msg.accountId }),
    );
  }

  onModuleDestroy(): void {
    this.unwatch?.();
  }

  /** The key of `hash` as Postgres has it now: its end, or the error that ends its streams. */
  async standing(hash: string): Promise<KeyStanding> {
    const ctx = await this.authenticator.current(hash);
    const why = ctx ? unusableBecause(ctx, Date.now()) : 'revoked';
    if (why || !ctx) return { refused: new ApiError('invalid_api_key', ENDED[why ?? 'revoked']) };
    return { validUntil: usableUntil(ctx) };
  }
}
