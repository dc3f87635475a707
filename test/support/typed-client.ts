import createClient, { Client } from 'openapi-fetch';
import type { paths } from '@petstore/client';
import { contractFor } from './contract';
import { HttpClient } from './http';

/**
 * An openapi-fetch client typed by packages/client/src/generated/openapi.ts (generated from openapi.json),
 * so a breaking change in the document breaks the compilation of the tests that use it.
 * Its answers go through the same contract check as HttpClient's.
 */
export function typedClient(http: HttpClient): Client<paths> {
  const sentBodies = new WeakMap<Request, string | undefined>();
  const client = createClient<paths>({ baseUrl: `${http.baseUrl}/v1` });
  client.use({
    async onRequest({ request }) {
      request.headers.set('X-Forwarded-For', http.clientIp);
      if (http.defaultKey) request.headers.set('Authorization', `Bearer ${http.defaultKey}`);
      // Read now: by the time the answer comes, fetch has consumed the body.
      sentBodies.set(request, request.body ? await request.clone().text() : undefined);
      return request;
    },
    async onResponse({ request, response }) {
      const url = new URL(request.url);
      const text = await response.clone().text();
      const body = sentBodies.get(request);
      (await contractFor(http.baseUrl))?.assert({
        method: request.method,
        path: url.pathname + url.search,
        status: response.status,
        headers: response.headers,
        text,
        request: { headers: request.headers, body },
      });
      return response;
    },
  });
  return client;
}
