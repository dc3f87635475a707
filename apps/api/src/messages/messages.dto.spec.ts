import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { MESSAGE_MAX_LENGTH } from '@app/messages';
import { NewMessageDto } from './messages.dto';

const validByClassValidator = (body: object) =>
  validateSync(plainToInstance(NewMessageDto, body), { whitelist: true, forbidNonWhitelisted: true }).length === 0;

describe('NewMessageDto.acceptsBody', () => {
  const astral = '\u{1F436}';
  const bodies: [string, unknown][] = [
    ['a short text', { message: 'hello' }],
    ['the longest text in astral characters', { message: astral.repeat(MESSAGE_MAX_LENGTH) }],
    ['one character too many', { message: astral.repeat(MESSAGE_MAX_LENGTH + 1) }],
    ['an empty text', { message: '' }],
    ['a NUL', { message: 'a\0b' }],
    ['a lone surrogate', { message: 'a\uD800' }],
    ['a number', { message: 1 }],
    ['another field too', { message: 'hello', extra: 1 }],
    ['no message', {}],
    ['an array', ['hello']],
    ['null', null],
  ];

  it.each(bodies)('accepts %s only if class-validator does', (_, body) => {
    const valid = typeof body === 'object' && body !== null && !Array.isArray(body) && validByClassValidator(body);
    expect(NewMessageDto.acceptsBody(body)).toBe(valid);
  });
});
