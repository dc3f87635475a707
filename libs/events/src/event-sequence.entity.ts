import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';

/** The last event sequence number per resource: taking the next one locks this row. */
@Entity('event_sequences')
@ForeignKey('accounts', ['accountId'], ['id'], { name: 'event_sequences_account_id_fkey', onDelete: 'CASCADE' })
export class EventSequenceEntity {
  @PrimaryColumn('bigint', { name: 'account_id', primaryKeyConstraintName: 'event_sequences_pkey' })
  accountId!: number;

  @PrimaryColumn('text', { name: 'resource_type', primaryKeyConstraintName: 'event_sequences_pkey' })
  resourceType!: string;

  @PrimaryColumn('text', { name: 'resource_id', primaryKeyConstraintName: 'event_sequences_pkey' })
  resourceId!: string;

  @Column('integer')
  last!: number;
}
