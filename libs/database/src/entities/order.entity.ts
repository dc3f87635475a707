import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** An order for units of one pet; open until the worker fulfils it (cancelling deletes it). */
@Entity('orders')
export class Order {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('bigint', { name: 'account_id' })
  accountId!: number;

  @Column('bigint', { name: 'pet_id' })
  petId!: number;

  @Column('integer')
  quantity!: number;

  /** Requested ship date, or the fulfilment time when none was requested. */
  @Column('timestamptz', { name: 'ship_date', nullable: true })
  shipDate!: Date | null;

  @Column('boolean')
  complete!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
