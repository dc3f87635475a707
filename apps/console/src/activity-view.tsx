import type { Event, MessageDetail } from '../../../packages/client/src/schema';
import type { PetstoreClient } from './session';
import { ErrorNote, Section, useLoad, when } from './ui';

const RECENT = 20;

export function ActivityView({ client, onKeyRejected }: { client: PetstoreClient; onKeyRejected: () => void }) {
  const messages = useLoad(
    () => client.data<MessageDetail[]>('GET', '/v1/messages', { query: { order: 'newest', limit: RECENT } }),
    [client],
    onKeyRejected,
  );
  const events = useLoad(
    () => client.data<Event[]>('GET', '/v1/events', { query: { order: 'newest', limit: RECENT } }),
    [client],
    onKeyRejected,
  );
  return (
    <>
      <Section
        title="Recent messages"
        actions={
          <button type="button" onClick={messages.reload}>
            Refresh
          </button>
        }
      >
        <ErrorNote message={messages.error} />
        <table data-testid="messages">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Status</th>
              <th scope="col">Text</th>
              <th scope="col">Accepted</th>
            </tr>
          </thead>
          <tbody>
            {(messages.data ?? []).map((m) => (
              <tr key={m.id}>
                <th scope="row">
                  <code>{m.id}</code>
                </th>
                <td>{m.status}</td>
                <td class="clip">{m.message}</td>
                <td>{when(m.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section
        title="Recent events"
        actions={
          <button type="button" onClick={events.reload}>
            Refresh
          </button>
        }
      >
        <ErrorNote message={events.error} />
        <table data-testid="events">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Type</th>
              <th scope="col">Resource</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {(events.data ?? []).map((e) => (
              <tr key={e.id}>
                <th scope="row">{e.id}</th>
                <td>{e.type}</td>
                <td>
                  {e.resourceType} {e.resourceId}
                </td>
                <td>{when(e.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
