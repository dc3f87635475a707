import { messageQueries, NewMessageRow } from './messages.queries';

const row = (id: string): NewMessageRow => ({
  id,
  accountId: 7,
  text: 'say "hi" \\ there',
  createdAt: '2026-11-27T09:00:00.000Z',
  traceparent: null,
});

describe('messageQueries.insertBatch', () => {
  it("binds a batch of rows as one JSON text, not as an array per column, beside its job's id", () => {
    const rows = [row('msg_a'), row('msg_b')];
    const { values } = messageQueries.insertBatch(rows);
    expect(values).toHaveLength(2);
    expect([values[0], JSON.parse(values[1] as string)]).toEqual(['msg_a', rows]);
  });
});
