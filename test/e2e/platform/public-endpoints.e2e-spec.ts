import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { ReadinessService } from '@app/lifecycle';
import { expectErrorBody } from '../../support/expect-error';
import { HttpClient, HttpResponse } from '../../support/http';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The bytes as sent (fetch would decode gzip and hide Content-Length). */
function raw(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('public endpoints cost little', () => {
  let api: RunningApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api?.close());

  describe('the OpenAPI document', () => {
    // /docs gets the document as a stand-in that serialises to it (openapi/docs-page-document.ts): fails if
    // @nestjs/swagger stops embedding it through JSON.stringify.
    it('/docs/swagger-ui-init.js embeds the document /openapi.json serves', async () => {
      const script = (await raw(`${api.url}/docs/swagger-ui-init.js`)).body.toString();
      const start = script.indexOf('let options = ') + 'let options = '.length;
      const options = JSON.parse(script.slice(start, script.indexOf('\n};', start) + 2)) as { swaggerDoc: unknown };
      const served = JSON.parse((await raw(`${api.url}/openapi.json`)).body.toString()) as { paths: object };
      expect(Object.keys(served.paths).length).toBeGreaterThan(10);
      expect(options.swaggerDoc).toEqual(served);
    });

    it.each(['/openapi.json', '/v1/openapi.json'])(
      '%s: strong ETag, 5 minutes of caching, 304 on If-None-Match',
      async (path) => {
        const first = await raw(`${api.url}${path}`);
        expect(first.status).toBe(200);
        expect(first.headers['content-encoding']).toBeUndefined();
        expect(first.headers['cache-control']).toBe('public, max-age=300');
        expect(first.headers['vary']).toBe('Accept-Encoding');
        expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(Number(first.headers['content-length'])).toBe(first.body.length);
        const etag = first.headers.etag as string;
        expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
        expect(JSON.parse(first.body.toString('utf8')).openapi).toBe('3.0.3');

        const again = await raw(`${api.url}${path}`, { 'If-None-Match': etag });
        expect(again.status).toBe(304);
        expect(again.headers.etag).toBe(etag);
        expect(again.body.length).toBe(0);
        expect((await raw(`${api.url}${path}`, { 'If-None-Match': `"other", W/${etag}` })).status).toBe(304);
        expect((await raw(`${api.url}${path}`, { 'If-None-Match': '"other"' })).status).toBe(200);
      },
    );

    it('is gzipped for a client that accepts it, with its own ETag, the same document inside', async () => {
      const plain = await raw(`${api.url}/openapi.json`);
      const gzipped = await raw(`${api.url}/openapi.json`, { 'Accept-Encoding': 'br, gzip;q=0.8' });
      expect(gzipped.status).toBe(200);
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length);
      expect(gzipped.body.length).toBeLessThan(plain.body.length / 4);
      expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
      const etag = gzipped.headers.etag as string;
      expect(etag).not.toBe(plain.headers.etag);
      expect((await raw(`${api.url}/openapi.json`, { 'Accept-Encoding': 'gzip', 'If-None-Match': etag })).status).toBe(
        304,
      );
      const refused = await raw(`${api.url}/openapi.json`, { 'Accept-Encoding': 'gzip;q=0' });
      expect(refused.headers['content-encoding']).toBeUndefined();
    });
  });

  describe('GET /', () => {
    it('answers without a key with the links to the reference, the console, the document and the API', async () => {
      const res = await raw(`${api.url}/`, { Accept: '*/*' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.vary).toBe('Accept');
      expect(JSON.parse(res.body.toString('utf8'))).toEqual({
        name: 'Pet Store API',
        links: { docs: '/docs', console: '/console', openapi: '/openapi.json', api: '/v1' },
      });
    });

    it('sends a browser (text/html preferred) on to /docs', async () => {
      const res = await raw(`${api.url}/`, {
        Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/docs');
    });

    it('links only to what answers without a key', async () => {
      const { links } = JSON.parse((await raw(`${api.url}/`)).body.toString('utf8')) as {
        links: Record<string, string>;
      };
      const pages = [links.docs, links.console, links.openapi];
      const statuses = await Promise.all(pages.map(async (p) => [p, (await raw(`${api.url}${p}`)).status]));
      // /docs and /console may first add their trailing slash.
      expect(statuses.filter(([, status]) => status !== 200 && status !== 301)).toEqual([]);
    });
  });

  describe('readiness', () => {
    it('answers concurrent probes from one check, and checks again once the result is 1 s old', async () => {
      const readiness = api.app.get(ReadinessService);
      // Past any result an earlier probe left.
      await new Promise((r) => setTimeout(r, 1_100));
      const checks = jest.spyOn(readiness, 'dependencies');
      try {
        const anon = new HttpClient(api.url);
        const probes = await Promise.all(Array.from({ length: 20 }, () => anon.get('/health/ready')));
        expect(probes.map((p) => p.status)).toEqual(Array(20).fill(200));
        expect(checks).toHaveBeenCalledTimes(1);
        await new Promise((r) => setTimeout(r, 1_100));
        expect((await anon.get('/health/ready')).status).toBe(200);
        expect(checks).toHaveBeenCalledTimes(2);
      } finally {
        checks.mockRestore();
      }
    });

    it('is answered on the metrics port too, for the kubelet', async () => {
      const ops = new HttpClient(api.metricsUrl);
      const live = await ops.get('/health/live');
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });
      const ready = await ops.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });
    });
  });

  describe('paths nothing serves', () => {
    let keyed: HttpClient;
    /** What every other miss answers: the Error body and its content type. */
    let v1Miss: HttpResponse<any>;

    beforeAll(async () => {
      keyed = new HttpClient(api.url, (await createAccount(api)).apiKey);
      v1Miss = await keyed.get('/v1/nope');
      expectErrorBody(v1Miss, 404, 'not_found');
    });

    const expectMiss = (res: HttpResponse<any>) => {
      expectErrorBody(res, 404, 'not_found');
      expect(res.body).toEqual(v1Miss.body);
      expect(res.headers.get('content-type')).toBe(v1Miss.headers.get('content-type'));
    };

    it('a miss under /docs answers the Error body 404 not_found, key or not', async () => {
      for (const client of [new HttpClient(api.url), keyed]) {
        expectMiss(await client.get('/docs/nope'));
        expectMiss(await client.get('/docs/docs/nope'));
        expectMiss(await client.post('/docs/'));
      }
    });

    it('a miss under /console answers the Error body 404 not_found, key or not', async () => {
      for (const client of [new HttpClient(api.url), keyed]) {
        expectMiss(await client.get('/console/nope'));
        expectMiss(await client.get('/console/nope.js'));
        expectMiss(await client.post('/console/'));
      }
    });

    it('a path outside /v1 that nothing serves answers the Error body 404 not_found to a key', async () => {
      for (const path of ['/nope', '/docsx', '/health', '/openapi.yaml']) expectMiss(await keyed.get(path));
      expectMiss(await keyed.post('/nope'));
    });

    it('the document is served at its own paths only, to GET and HEAD: below them or by POST is a miss', async () => {
      expectMiss(await new HttpClient(api.url).post('/openapi.json'));
      expectMiss(await keyed.get('/openapi.json/x'));
      expectMiss(await keyed.get('/v1/openapi.json/x'));
      // Gated, as any path no route takes (fetch: the contract check would want a 404 under /v1).
      expect((await fetch(`${api.url}/openapi.json/x`)).status).toBe(401);
      expect((await fetch(`${api.url}/v1/openapi.json`, { method: 'HEAD' })).status).toBe(200);
    });

    it('/docs-yaml is not served: 404 not_found to any key (an admin-only one too), 401 without one', async () => {
      const adminOnly = await keyed.post('/v1/keys', { name: 'admin only', scopes: ['admin'] });
      expect(adminOnly.status).toBe(201);
      for (const path of ['/docs-yaml', '/docs-json']) {
        expectMiss(await keyed.get(path));
        expectMiss(await keyed.withKey(adminOnly.body.secret).get(path));
        expectErrorBody(await new HttpClient(api.url).get(path), 401, 'missing_api_key');
      }
    });

    it('the routes outside /v1 still answer: /docs, /console/, the document, the probes', async () => {
      const anon = new HttpClient(api.url);
      expect((await anon.get('/docs')).status).toBe(200);
      expect((await anon.get('/docs/swagger-ui-init.js')).status).toBe(200);
      expect((await anon.get('/console/')).status).toBe(200);
      expect((await anon.get('/openapi.json')).status).toBe(200);
      expect((await anon.get('/health/live')).status).toBe(200);
      expect((await anon.get('/health/live/')).status).toBe(200);
      expect((await keyed.get('/HEALTH/live')).status).toBe(200);
      expect((await keyed.get('/V1/account')).status).toBe(200);
    });
  });
});
