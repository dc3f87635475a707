import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

/**
 * An animal of the catalog. The row also holds the pet's inventory entry (`stock`), so an
 * order takes stock and the derived `status` is recomputed under one row lock.
 */
@Entity('pets')
export class Pet {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('bigint', { name: 'account_id' })
  accountId!: number;

  @Column('bigint', { name: 'category_id' })
  categoryId!: number;

  @Column('text')
  name!: string;

  /** Derived, never chosen: available if stock > 0, else pending with open orders, else sold. */
  @Column('text')
  status!: PetStatus;

  @Column('integer')
  stock!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
