import { loadConfig } from '@app/config';
import { migrate } from '@app/database';
import { eventually, HttpClient } from '../../support/http';
import { PostgresReplica } from '../../support/postgres-replica';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

/**
 * DATABASE_REPLICA_URLS on a real streaming replica (pg_basebackup of a primary the harness
 * starts): reads that may be slightly stale go to the replica while it keeps up; every other
 * read, and the reads right after a write, stay on the primary.
 */
describe('read replicas (DATABASE_REPLICA_URLS)', () => {
  let servers: PostgresReplica;
  let api: RunningApi;
  let client: HttpClient;

  const pauseReplay = () => servers.query(servers.replicaPort, 'SELECT pg_wal_replay_pause()');
  const resumeReplay = () => servers.query(servers.replicaPort, 'SELECT pg_wal_replay_resume()');
  const eventTypes = async () =>
    ((await client.get('/v1/events?limit=100')).body as { type: string; data: { name?: string } }[]).map((e) =>
      `${e.type} ${e.data.name ?? ''}`.trim(),
    );
  /** The replica's lag as the API last polled it, in seconds; -1 while it cannot reach it. */
  const replicaLag = async () =>
    Number(
      /^petstore_db_replica_lag_seconds\{replica="0"\} (\S+)/m.exec(
        await (await fetch(`${api.metricsUrl}/metrics`)).text(),
      )?.[1],
    );

  beforeAll(async () => {
    servers = await PostgresReplica.start();
    const env = {
      DATABASE_URL: servers.url(servers.primaryPort),
      DATABASE_REPLICA_URLS: servers.url(servers.replicaPort),
      DATABASE_REPLICA_MAX_LAG_MS: '1500',
    };
    await migrate(loadConfig({ ...process.env, ...env }));
    api = await startApi(env);
    client = new HttpClient(api.url, (await createAccount(api, 'business')).apiKey);
    // The account exists on the replica too, and the replica is in use.
    await eventually(
      async () => (await servers.query(servers.replicaPort, 'SELECT 1 FROM accounts', 'petstore')).length > 0,
    );
    await eventually(async () => {
      const lag = await replicaLag();
      return lag >= 0 && lag <= 1.5;
    });
  }, 60_000);
  afterAll(async () => {
    await resumeReplay().catch(() => undefined);
    await api?.close();
    await servers?.stop();
  });

  it('serves the event feed from the replica: what it has not replayed is not there yet', async () => {
    const category = (await client.post('/v1/categories', { name: 'replicated' })).body.id;
    await eventually(async () => (await eventTypes()).includes('category.created replicated'));
    await pauseReplay();
    try {
      expect((await client.post('/v1/pets', { name: 'unreplayed', categoryId: category })).status).toBe(201);
      expect(await eventTypes()).not.toContain('pet.created unreplayed');
    } finally {
      await resumeReplay();
    }
    await eventually(async () => (await eventTypes()).includes('pet.created unreplayed'));
  });

  it('reads a record right after the write that created it from the primary', async () => {
    const category = (await client.post('/v1/categories', { name: 'fresh' })).body.id;
    await pauseReplay();
    try {
      const pet = await client.post('/v1/pets', { name: 'read your writes', categoryId: category });
      expect((await client.get(`/v1/pets/${pet.body.id}`)).status).toBe(200);
      expect((await client.get('/v1/pets?limit=100')).body.map((p: { id: number }) => p.id)).toContain(pet.body.id);
    } finally {
      await resumeReplay();
    }
  });

  it('goes to the primary while the replica lags more than DATABASE_REPLICA_MAX_LAG_MS', async () => {
    const category = (await client.post('/v1/categories', { name: 'lagging' })).body.id;
    await pauseReplay();
    try {
      await client.post('/v1/pets', { name: 'behind', categoryId: category });
      // Paused with WAL waiting: the lag grows past 1.5 s, and the feed moves to the primary.
      await eventually(async () => (await eventTypes()).includes('pet.created behind'), 5_000);
      const metrics = await (await fetch(`${api.metricsUrl}/metrics`)).text();
      expect(metrics).toMatch(/^petstore_db_stale_reads_total\{target="primary"\} [1-9]/m);
    } finally {
      await resumeReplay();
    }
  });

  it('keeps answering from the primary when the replica is gone', async () => {
    await servers.stopReplica();
    await eventually(async () => (await replicaLag()) === -1); // the API has seen it gone
    expect((await client.get('/v1/events?limit=5')).status).toBe(200);
  });
});
