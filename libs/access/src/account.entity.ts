import { Check, Column, Entity } from 'typeorm';
import { IdentityKey, isIn, Timestamp } from '@app/database';

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** A customer of the API: owns every record and shares one rate-limit budget across its keys. */
@Entity('accounts')
@Check('accounts_name_check', 'length(name) BETWEEN 1 AND 200')
@Check('accounts_plan_check', isIn('plan', PLANS))
@Check('accounts_limit_per_minute_check', 'limit_per_minute > 0')
@Check('accounts_limit_per_day_check', 'limit_per_day > 0')
@Check('enterprise_has_limits', `plan <> 'enterprise' OR (limit_per_minute IS NOT NULL AND limit_per_day IS NOT NULL)`)
export class AccountEntity {
  @IdentityKey('accounts')
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

  @Timestamp('created_at')
  createdAt!: Date;
}
