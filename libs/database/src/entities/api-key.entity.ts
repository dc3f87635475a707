import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

/** An API key: only its SHA-256 hash and a short display prefix are stored, never the secret. */
@Entity('api_keys')
export class ApiKey {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Index()
  @Column('bigint', { name: 'account_id' })
  accountId!: number;

  @Column('text')
  name!: string;

  @Column('text')
  prefix!: string;

  @Index({ unique: true })
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
