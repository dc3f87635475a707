import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** A customer of the API: owns every record and shares one rate-limit budget across its keys. */
@Entity('accounts')
export class Account {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column('text')
  name!: string;

  @Column('text')
  plan!: Plan;

  /** Only enterprise accounts carry their own limits; other plans use the fixed table. */
  @Column('integer', { name: 'limit_per_minute', nullable: true })
  limitPerMinute!: number | null;

  @Column('integer', { name: 'limit_per_day', nullable: true })
  limitPerDay!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
