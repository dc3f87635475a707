/** One state change of one resource, written in the transaction that made the change. */
export interface DomainEvent {
  id: number;
  accountId: number;
  type: string;
  resourceType: string;
  resourceId: string;

  /** 1, 2, 3... per resource, so a consumer can order and de-duplicate what it receives. */
  sequence: number;
  data: Record<string, unknown>;
  createdAt: Date;
}
