// The OpenAPI text of KeysController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrorResponse, ApiQuotaError } from '../openapi/api-errors.decorator';
import { ApiKeySchema, IssuedApiKeySchema, RotateApiKeyDto } from './keys.dto';

const ROTATED_OUT = () =>
  ApiErrorResponse(
    403,
    'The API key lacks a scope this needs (insufficient_scope), or was rotated out: in its grace period it may list keys ' +
      'but not create, rotate or revoke them (api_key_rotated_out)',
  );

const MANAGEMENT =
  'Needs the `admin` scope (403 `insufficient_scope`); a key rotated out and in its grace period may list ' +
  'keys but not create, rotate or revoke them (403 `api_key_rotated_out`).';

export const ListApiKeysDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listApiKeys',
      summary: 'The active keys of the account (never their secrets)',
      description: `${MANAGEMENT} Every active key of the account (revoked ones are left out) with its name, prefix, scopes, expiry and last use. Secrets are never returned after creation.`,
    }),
    ApiOkResponse({ type: [ApiKeySchema] }),
  );

export const CreateApiKeyDocs = () =>
  applyDecorators(
    ApiQuotaError('keys'),
    ApiErrorResponse(422, "`expiresAt` is later than the calling key's expiry (key_expiry_too_late)"),
    ROTATED_OUT(),
    ApiOperation({
      operationId: 'createApiKey',
      summary: 'Issue a key; the secret is in this answer only',
      description:
        `${MANAGEMENT} Issues a new key with the given name, scopes and optional expiry. The new key has at most the calling key's scopes ` +
        "(403 `insufficient_scope`) and expires no later than it (422 `key_expiry_too_late`); by default it has the calling key's `read` " +
        'and `write` and its expiry. The `key` field holds the secret and appears in this answer only: store it at once. Send an ' +
        "Idempotency-Key so a retried request does not issue a second key. An account holds at most its plan's number of working keys " +
        '(free 10, pro 25, business 100, enterprise 250; revoked and expired keys do not count, a rotated key counts until its grace ' +
        'period ends); one more is 422 `quota_exceeded`.',
    }),
    ApiCreatedResponse({ type: IssuedApiKeySchema }),
  );

export const RevokeApiKeyDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'revokeApiKey',
      summary: 'Revoke a key; every replica refuses it within a second',
      description:
        `${MANAGEMENT} Revokes a key at once; requests with it get 401 \`invalid_api_key\` on every replica within about a second. ` +
        'A key cannot be restored: issue a new one. A key revokes itself or keys with no scope and no expiry beyond its own (else 403 ' +
        "`insufficient_scope`); the account's last key able to manage keys cannot be revoked (409 `last_admin_key`).",
    }),
    ApiNoContentResponse({ description: 'Revoked' }),
    ApiErrorResponse(409, "The key is the account's last key able to manage keys (last_admin_key)"),
    ROTATED_OUT(),
  );

export const RotateApiKeyDocs = () =>
  applyDecorators(
    ApiQuotaError('keys'),
    ROTATED_OUT(),
    ApiBody({
      type: RotateApiKeyDto,
      required: false,
      description: 'Optional: without a body the default grace period applies',
    }),
    ApiOperation({
      operationId: 'rotateApiKey',
      summary: 'New secret with the same scopes and expiry; the old one works for a grace period',
      description:
        `${MANAGEMENT} Issues a new secret for the key, with the same name, scopes and expiry, and keeps the old secret working for ` +
        '`gracePeriodSeconds` (default from the server, at most 604800: 7 days) so clients can switch over. Until the grace period ' +
        "ends the old secret counts toward the plan's key quota: an account at its quota rotates with a grace of 0, or gets 422 " +
        '`quota_exceeded`. Only the newest secret of a key can be rotated ' +
        '(404 otherwise). A key rotates itself or keys with no scope and no expiry beyond its own (else 403 `insufficient_scope`). ' +
        "A banned key's replacement is banned for the time the ban has left. Send an Idempotency-Key so a retried request does not " +
        'rotate twice (the retry gets the same new secret).',
    }),
    ApiCreatedResponse({ type: IssuedApiKeySchema }),
  );
