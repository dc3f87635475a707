import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Requests one API key had admitted and refused, and the bans it began, in one time bucket. */
export abstract class UsageCounts {
  @PrimaryColumn('bigint', { name: 'account_id' })
  accountId!: number;

  /** No foreign key: a deleted key's history stays with its account. */
  @PrimaryColumn('bigint', { name: 'key_id' })
  keyId!: number;

  @Column('integer', { default: 0 })
  admitted!: number;

  @Column('integer', { default: 0 })
  refused!: number;

  @Column('integer', { default: 0 })
  bans!: number;
}

/** Time-partitioned (SCHEMA_EXCEPTIONS): its keys and indexes are the migrations' alone. */
@Entity({ name: 'usage_minutes', synchronize: false })
export class UsageMinuteEntity extends UsageCounts {
  @PrimaryColumn('timestamptz')
  minute!: Date;
}
