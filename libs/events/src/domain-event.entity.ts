import { Column, Entity, PrimaryColumn } from 'typeorm';
import { IdentityKey, Timestamp } from '@app/database';

/** Time-partitioned (SCHEMA_EXCEPTIONS): its keys and indexes are the migrations' alone. */
@Entity({ name: 'events', synchronize: false })
export class DomainEventEntity {
  /** The key leads with the account: (account_id, id). */
  @PrimaryColumn('bigint', { name: 'account_id', primaryKeyConstraintName: 'events_pkey' })
  accountId!: number;

  @IdentityKey('events')
  id!: number;

  @Column('text')
  type!: string;

  @Column('text', { name: 'resource_type' })
  resourceType!: string;

  @Column('text', { name: 'resource_id' })
  resourceId!: string;

  /** 1, 2, 3... per resource, so a consumer can order and de-duplicate what it receives. */
  @Column('integer')
  sequence!: number;

  @Column('jsonb')
  data!: Record<string, unknown>;

  @Timestamp('created_at')
  createdAt!: Date;

  /** False until the event's webhook deliveries are written. */
  @Column('boolean', { name: 'fanned_out', default: true })
  fannedOut!: boolean;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  /** Shown and delivered as ADMIN_EVENT_TYPES are, whatever its type (NewDomainEvent.adminOnly). */
  @Column('boolean', { name: 'admin_only', default: false })
  adminOnly!: boolean;
}
