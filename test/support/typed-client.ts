import createClient, { Client } from 'openapi-fetch';
import type { paths } from '../generated/openapi';
import { contractFor } from './contract';
import { HttpClient } from './http';

/**
 * An openapi-fetch client typed by test/generated/openapi.d.ts (generated from openapi.json),
 * so a breaking change in the document breaks the compilation of the tests that use it.
 * Its answers go through the same contract check as HttpClient's.
 */
export function typedClient(http: HttpClient): Client<paths> {
  const client = createClient<paths>({ baseUrl: `${http.baseUrl}/v1` });
  client.use({
    onRequest({ request }) {
      request.headers.set('X-Forwarded-For', http.clientIp);
      if (http.defaultKey) request.headers.set('Authorization', `Bearer ${http.defaultKey}`);
      return request;
    },
    async onResponse({ request, response }) {
      const url = new URL(request.url);
      const text = await response.clone().text();
      (await contractFor(http.baseUrl))?.assert({
        method: request.method,
        path: url.pathname + url.search,
        status: response.status,
        headers: response.headers,
        text,
      });
      return response;
    },
  });
  return client;
}
