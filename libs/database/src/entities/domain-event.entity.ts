import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One state change of one resource, written in the transaction that made the change. */
@Entity('events')
@Index(['accountId', 'id'])
@Index(['accountId', 'type', 'id'])
export class DomainEvent {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('bigint', { name: 'account_id' })
  accountId!: number;

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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
