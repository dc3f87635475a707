import fastify, { FastifyInstance } from 'fastify';
import { ApiError } from '@app/errors';
import { RouteRegistry, UNROUTED } from './route-registry';

const policy = { ...UNROUTED, scope: 'read' as const };

function appWith(routes: (app: FastifyInstance) => void): { app: FastifyInstance; registry: RouteRegistry } {
  const app = fastify();
  app.setErrorHandler((err: ApiError, _req, reply) => reply.code(err.status).headers(err.headers).send(err.toBody()));
  const registry = new RouteRegistry();
  registry.watch(app);
  routes(app);
  return { app, registry };
}

describe('RouteRegistry', () => {
  it('refuses a keyed route that declares no @Policy', () => {
    expect(() => appWith((app) => app.get('/v1/things', async () => []))).toThrow(
      /GET \/v1\/things declares no @Policy/,
    );
  });

  it('answers the methods a keyed path lacks 405, naming its own in Allow in the document order', async () => {
    const { app, registry } = appWith((app) => {
      app.post('/v1/things', { config: { policy } }, async () => ({}));
      app.get('/v1/things', { config: { policy } }, async () => []);
    });
    registry.onApplicationBootstrap();
    const res = await app.inject({ method: 'DELETE', url: '/v1/things' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST, HEAD');
    expect(res.json()).toMatchObject({ code: 'method_not_allowed', message: expect.stringContaining('DELETE') });
    expect((await app.inject({ method: 'GET', url: '/v1/things' })).statusCode).toBe(200);
  });

  it('leaves public routes and paths outside /v1 to the not-found handler', async () => {
    const { app, registry } = appWith((app) => {
      app.get('/health/live', { config: { public: true } }, async () => 'ok');
      app.get('/v1/openapi.json', { config: { public: true } }, async () => ({}));
    });
    registry.onApplicationBootstrap();
    expect((await app.inject({ method: 'POST', url: '/health/live' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/v1/openapi.json' })).statusCode).toBe(404);
  });
});
