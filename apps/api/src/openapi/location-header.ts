import { Type } from '@nestjs/common';
import { ApiCreatedResponse } from '@nestjs/swagger';

export function locationOf(template: string) {
  return {
    Location: {
      description: `The created record: ${template}`,
      required: true,
      schema: { type: 'string', format: 'uri-reference' },
    },
  };
}

/** 201 with the record in the body and its address (`template`) in `Location`. */
export const ApiCreatedAt = (type: Type, template: string, description = 'Created; `Location` names it') =>
  ApiCreatedResponse({ type, description, headers: locationOf(template) });
