export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** A customer of the API: owns every record and shares one rate-limit budget across its keys. */
export interface Account {
  id: number;
  name: string;
  plan: Plan;

  /** Only enterprise accounts carry their own limits; other plans use the fixed table. */
  limitPerMinute: number | null;
  limitPerDay: number | null;
  createdAt: Date;
}
