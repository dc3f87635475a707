import { Check, Column, Entity, Index } from 'typeorm';
import { AccountId, IdentityKey, Timestamp } from '@app/database';

/** An order of a pet. No foreign key to pets: a completed order stays readable after its pet is deleted. */
@Entity('orders')
@Check('orders_quantity_check', 'quantity > 0')
@Index('orders_account_id', ['accountId', 'id'])
@Index('orders_account_complete', ['accountId', 'complete', 'id'])
@Index('orders_account_pet', ['accountId', 'petId', 'id'])
@Index('orders_open_by_pet', ['accountId', 'petId'], { where: 'NOT complete' })
@Index('orders_open_due', { synchronize: false })
export class OrderEntity {
  @IdentityKey('orders')
  id!: number;

  @AccountId('orders')
  accountId!: number;

  @Column('bigint', { name: 'pet_id' })
  petId!: number;

  @Column('integer')
  quantity!: number;

  @Column('timestamptz', { name: 'ship_date', nullable: true })
  shipDate!: Date | null;

  @Column('boolean', { default: false })
  complete!: boolean;

  @Timestamp('created_at')
  createdAt!: Date;

  @Timestamp('updated_at')
  updatedAt!: Date;

  @Column('text', { nullable: true })
  traceparent!: string | null;
}
