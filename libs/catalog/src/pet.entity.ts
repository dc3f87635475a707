import { Check, Column, Entity, ForeignKey, Index } from 'typeorm';
import { AccountId, IdentityKey, isIn, Timestamp } from '@app/database';
import { CategoryEntity } from './category.entity';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

/** A pet and its inventory entry (`stock`). Its category is one of its own account's. */
@Entity('pets')
@Check('pets_name_check', 'length(name) BETWEEN 1 AND 200')
@Check('pets_status_check', isIn('status', PET_STATUSES))
@Check('pets_stock_check', 'stock >= 0')
@ForeignKey(() => CategoryEntity, ['accountId', 'categoryId'], ['accountId', 'id'], { name: 'pets_category_fk' })
@Index('pets_account_id', ['accountId', 'id'])
@Index('pets_account_status', ['accountId', 'status', 'id'])
@Index('pets_account_category', ['accountId', 'categoryId', 'id'])
@Index('pets_account_name_trgm', { synchronize: false })
export class PetEntity {
  @IdentityKey('pets')
  id!: number;

  @AccountId('pets')
  accountId!: number;

  @Column('bigint', { name: 'category_id' })
  categoryId!: number;

  @Column('text')
  name!: string;

  @Column('text')
  status!: PetStatus;

  @Column('integer')
  stock!: number;

  @Timestamp('created_at')
  createdAt!: Date;

  @Timestamp('updated_at')
  updatedAt!: Date;
}
