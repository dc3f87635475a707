/** A keyset page over integer ids: `limit` rows after the id `after`. */
export interface Page {
  limit: number;
  after?: number;
}
