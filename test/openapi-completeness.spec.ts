import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMAIN_EVENT_TYPES } from '@app/events';
import { ERROR_STATUS } from '@app/errors';

/** The committed document teaches a consumer the API: prose, examples, typed events, limits explained. */
const doc = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8'));
const operations = Object.values(doc.paths).flatMap((item: any) =>
  ['get', 'put', 'post', 'patch', 'delete'].filter((m) => item[m]).map((m) => item[m]),
);

describe('openapi.json for consumers', () => {
  it.each(operations.map((op: any) => [op.operationId, op]))('%s has a description', (_id, op: any) => {
    expect(op.description?.length).toBeGreaterThan(40);
  });

  it.each(operations.map((op: any) => [op.operationId, op]))(
    '%s has an example for its request body and every JSON answer',
    (_id, op: any) => {
      const body = op.requestBody?.content?.['application/json'];
      if (body) expect(body.example).toBeDefined();
      for (const response of Object.values(op.responses) as any[]) {
        const media = response.content?.['application/json'];
        if (media) expect(media.example).toBeDefined();
      }
    },
  );

  it('types Event.data per event type, as a union discriminated on type', () => {
    const event = doc.components.schemas.Event;
    expect(Object.keys(event.discriminator.mapping).sort()).toEqual([...DOMAIN_EVENT_TYPES].sort());
    expect(event.discriminator.propertyName).toBe('type');
    for (const ref of Object.values(event.discriminator.mapping) as string[]) {
      const variant = doc.components.schemas[ref.split('/').pop()!];
      expect(variant.properties.data.$ref).toMatch(/^#\/components\/schemas\//);
    }
  });

  it('explains x-stability in info.description and the scopes on the bearer scheme', () => {
    expect(doc.info.description).toMatch(/x-stability: beta/);
    expect(doc.info.description).toMatch(/x-stability: experimental/);
    expect(doc.components.securitySchemes.bearer.description).toMatch(/`read`.*`write`/s);
  });

  it('declares Idempotent-Replayed on the answers of operations taking an Idempotency-Key', () => {
    const idempotent = operations.filter((op: any) =>
      (op.parameters ?? []).some((p: any) => p.name === 'Idempotency-Key'),
    );
    expect(idempotent.length).toBeGreaterThan(0);
    for (const op of idempotent as any[]) {
      const [, success] = Object.entries(op.responses).find(([status]) => status < '300') as [string, any];
      expect(success.headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
    }
  });

  // Issue 63.1: GET /usage's 422 spoke of an Idempotency-Key it does not take; POST /keys's 409 showed insufficient_stock.
  it.each(operations.map((op: any) => [op.operationId, op]))(
    '%s: each 4xx description names only codes of its status, its example among them, Idempotency-Key only if taken',
    (_id, op: any) => {
      const idempotent = (op.parameters ?? []).some((p: any) => p.name === 'Idempotency-Key');
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        if (!status.startsWith('4') || !response.description) continue;
        const named = Object.keys(ERROR_STATUS).filter((code) =>
          new RegExp(`\\b${code}\\b`).test(response.description),
        );
        expect({ status, wrongStatus: named.filter((c) => String((ERROR_STATUS as any)[c]) !== status) }).toEqual({
          status,
          wrongStatus: [],
        });
        const example = response.content?.['application/json']?.example;
        if (example) {
          const { code } = example;
          expect({ status, code, named: named.includes(code) }).toEqual({ status, code, named: true });
        }
        if (!idempotent)
          expect({ status, description: response.description }).not.toMatchObject({
            description: expect.stringMatching(/Idempotency-Key|idempotency_key/),
          });
      }
    },
  );
});
