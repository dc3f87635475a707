import { Check, Column, Entity, Index } from 'typeorm';
import { AccountId, IdentityKey, Timestamp } from '@app/database';
import { Scope, SCOPES } from './scopes';

/** An API key: only its SHA-256 hash and a short display prefix are stored, never the secret. */
@Entity('api_keys')
@Check(
  'api_keys_scopes_check',
  `scopes <@ ARRAY[${SCOPES.map((s) => `'${s}'`).join(', ')}]::text[] AND cardinality(scopes) > 0`,
)
@Index('api_keys_key_hash', ['keyHash'], { unique: true })
@Index('api_keys_account_id', ['accountId', 'id'])
@Index('api_keys_live_legacy_prefix', ['prefix'], { where: 'NOT tagged AND revoked_at IS NULL' })
export class ApiKeyEntity {
  @IdentityKey('api_keys')
  id!: number;

  @AccountId('api_keys')
  accountId!: number;

  @Column('text')
  name!: string;

  @Column('text')
  prefix!: string;

  @Column('text', { name: 'key_hash' })
  keyHash!: string;

  @Column('text', { array: true })
  scopes!: Scope[];

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  /** Set when the key is rotated: it keeps working until this instant (the grace period). */
  @Column('timestamptz', { name: 'rotated_out_at', nullable: true })
  rotatedOutAt!: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Timestamp('created_at')
  createdAt!: Date;

  /** Issued with an HMAC tag (api-key-format.ts); untagged keys predate the tags. */
  @Column('boolean', { default: false })
  tagged!: boolean;
}
