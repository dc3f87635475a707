import { docsPageDocument } from './docs-page-document';

describe('docsPageDocument', () => {
  const document = { openapi: '3.0.3', info: { title: 'Pet Store — API', version: '1' }, paths: { '/v1/pets': {} } };
  const json = JSON.stringify(document);

  it('serialises, inside what swagger-ui-init.js embeds, to the document itself', () => {
    const standIn = docsPageDocument(json)();
    const options = { swaggerDoc: standIn, customOptions: { url: '/openapi.json' } };
    expect(JSON.stringify(options, null, 2)).toBe(JSON.stringify({ ...options, swaggerDoc: document }, null, 2));
  });

  it('keeps the document as its one string, not as parsed objects', () => {
    const standIn = docsPageDocument(json)() as unknown as Record<string, unknown>;
    expect(Object.keys(standIn)).toEqual(['toJSON']);
  });
});
