import { Check, Column, Entity, Index } from 'typeorm';
import { AccountId, IdentityKey, Timestamp } from '@app/database';

@Entity('categories')
@Check('categories_name_check', 'length(name) BETWEEN 1 AND 100')
@Check('categories_description_check', 'length(description) <= 1000')
// Unique so pets can reference (account_id, id); also the keyset index of the list.
@Index('categories_account_id', ['accountId', 'id'], { unique: true })
@Index('categories_account_name', { synchronize: false })
export class CategoryEntity {
  @IdentityKey('categories')
  id!: number;

  @AccountId('categories')
  accountId!: number;

  @Column('text')
  name!: string;

  @Column('text', { nullable: true })
  description!: string | null;

  @Timestamp('created_at')
  createdAt!: Date;

  @Timestamp('updated_at')
  updatedAt!: Date;
}
