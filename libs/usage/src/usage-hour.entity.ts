import { Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { UsageCounts } from './usage-minute.entity';

/** The minutes rolled up per UTC hour. */
@Entity('usage_hours')
@ForeignKey('accounts', ['accountId'], ['id'], { name: 'usage_hours_account_id_fkey', onDelete: 'CASCADE' })
@Index('usage_hours_age', ['hour'])
export class UsageHourEntity extends UsageCounts {
  @PrimaryColumn('timestamptz')
  hour!: Date;
}
