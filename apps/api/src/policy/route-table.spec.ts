import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { API_CONTROLLERS } from '../app.module';
import { RouteTable, UNROUTED } from './route-table';

const served = JSON.parse(readFileSync(join(__dirname, '../../../../openapi.json'), 'utf8')) as OpenAPIObject;

describe('RouteTable', () => {
  const table = RouteTable.compile(API_CONTROLLERS);

  it('compiles a policy for every operation of the committed document', () => {
    const operations = Object.values(served.paths).flatMap((item) =>
      ['get', 'put', 'post', 'patch', 'delete'].filter((m) => (item as Record<string, unknown>)[m]),
    );
    expect(table.entries).toHaveLength(operations.length);
  });

  it('refuses to start when an operation declares no policy', () => {
    @Controller('things')
    class BareController {
      @Get()
      listThings(): string[] {
        return [];
      }
    }
    expect(() => RouteTable.compile([BareController])).toThrow(/GET \/v1\/things \(listThings\) declares no @Policy/);
  });

  it('finds routes by method and path, case-insensitively and with a trailing slash, as Express routes them', () => {
    expect(table.policyFor('GET', '/v1/pets/7').scope).toBe('read');
    expect(table.policyFor('DELETE', '/V1/Pets/7/').scope).toBe('write');
    expect(table.policyFor('HEAD', '/v1/keys').scope).toBe('admin');
    expect(table.policyFor('POST', '/v1/keys/3/rotate').idempotent).toBe('same-key');
    expect(table.policyFor('GET', '/v1/usage').metering).toEqual(expect.objectContaining({ name: 'usage' }));
  });

  it('prefers a literal segment to a parameter', () => {
    expect(table.policyFor('GET', '/v1/store/inventory').scope).toBe('read');
    expect(table.allowedAt('/v1/store/inventory')).toEqual(['GET', 'HEAD']);
  });

  it('gives paths and methods no route takes the unrouted policy, and names the allowed methods of a known path', () => {
    expect(table.policyFor('GET', '/v1/nope')).toBe(UNROUTED);
    expect(table.policyFor('GET', '/v1//pets')).toBe(UNROUTED);
    expect(table.policyFor('PUT', '/v1/pets')).toBe(UNROUTED);
    expect(table.allowedAt('/v1/nope')).toBeUndefined();
    expect(table.allowedAt('/v1/pets')).toEqual(['GET', 'POST', 'HEAD']);
  });

  it('finds a parameter below a literal segment, and none for an empty segment', () => {
    expect(table.allowedAt('/v1/store/inventory/7/')).toEqual(['GET', 'PUT', 'HEAD']);
    expect(table.policyFor('GET', '/v1/store//7')).toBe(UNROUTED);
    expect(table.policyFor('GET', '/v1/pets//')).toBe(UNROUTED);
    expect(table.allowedAt('/')).toBeUndefined();
  });

  it('folds ASCII letters only, as Express matches a route case-insensitively', () => {
    // KELVIN SIGN lowercases to "k", yet Express does not route /v1/\u212Aeys to /v1/keys.
    expect(table.policyFor('GET', '/v1/\u212Aeys')).toBe(UNROUTED);
    expect(table.allowedAt('/v1/\u212Aeys')).toBeUndefined();
  });

  it('hands every request the same frozen list of allowed methods', () => {
    const allowed = table.allowedAt('/v1/pets/7');
    expect(Object.isFrozen(allowed)).toBe(true);
    expect(table.allowedAt('/V1/PETS/8/')).toBe(allowed);
  });
});
