// The OpenAPI text of MessagesController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { LINK_HEADER } from '../common/pagination';
import { MessageDetailSchema, MessageSchema } from './messages.dto';
import { locationOf } from '../openapi/location-header';

export const CreateMessageDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'createMessage',
      summary: 'Queue a message; it is stored before the answer and processed by the worker',
      description:
        'Stores a message and queues it for the worker, answering 202 with status `queued` before it is processed. Poll GET /messages/{id} (or listen for `message.processed` / `message.failed`) for the result. Send an Idempotency-Key so a retry does not queue it twice.',
    }),
    ApiAcceptedResponse({
      type: MessageSchema,
      description: 'Accepted and queued',
      headers: locationOf('/v1/messages/{id}'),
    }),
  );

export const ListMessagesDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'listMessages',
      summary: 'The account’s messages, oldest (or newest) first, in keyset pages',
      description:
        'The account\'s messages in creation order (oldest first, or newest first with `order=newest`), in keyset pages, optionally filtered by status. Follow `Link: rel="next"` for the next page. A processed or failed message is kept 30 days after it was accepted (the operator’s `RETENTION_MESSAGES_DAYS`), then answers 404 like any missing message.',
    }),
    ApiOkResponse({ type: [MessageDetailSchema], headers: LINK_HEADER }),
  );

export const GetMessageDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getMessage',
      summary: 'A message and its processing state',
      description:
        'A message with its processing state: attempts made, the result (character count and SHA-256) once `processed`, the reason once `failed`. A processed or failed message is kept 30 days after it was accepted (the operator’s `RETENTION_MESSAGES_DAYS`), then answers 404 like any missing message.',
    }),
    ApiOkResponse({ type: MessageDetailSchema }),
  );
