import { ApiProperty, ApiPropertyOptional, ApiSchema, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsString, Matches, ValidateBy } from 'class-validator';
import { IsOptional } from '@app/errors';
import { MESSAGE_ID_PATTERN, MESSAGE_MAX_LENGTH, MESSAGE_STATUSES, MessageStatus } from '@app/messages';
import { FeedOrderQuery, PageLimit } from '../common/pagination';

const ID_EXAMPLE = 'msg_019a9c4e2f10b7d3e8a41c5f9e02';

/** 1..MESSAGE_MAX_LENGTH Unicode characters (code points, as Postgres counts them), well-formed, no NUL. */
const isMessageText = (v: unknown): v is string => {
  if (typeof v !== 'string' || v.includes('\0') || /\p{Cs}/u.test(v)) return false;
  // No more code points than UTF-16 units: only a long text needs counting.
  return v.length >= 1 && (v.length <= MESSAGE_MAX_LENGTH || [...v].length <= MESSAGE_MAX_LENGTH);
};

function IsMessageText(): PropertyDecorator {
  return ValidateBy({
    name: 'isMessageText',
    validator: {
      validate: isMessageText,
      defaultMessage: () =>
        `must be 1 to ${MESSAGE_MAX_LENGTH} characters of well-formed Unicode text without NUL characters`,
    },
  });
}

@ApiSchema({ name: 'NewMessage' })
export class NewMessageDto {
  /** The hottest write's body, checked without class-validator when valid (QuickBodyCheck in @app/errors). */
  static acceptsBody(body: unknown): boolean {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
    const keys = Object.keys(body);
    return keys.length === 1 && keys[0] === 'message' && isMessageText((body as { message: unknown }).message);
  }

  @ApiProperty({
    description: 'Text to send',
    minLength: 1,
    maxLength: MESSAGE_MAX_LENGTH,
    example: 'Hello, pet store!',
  })
  @IsString()
  @IsMessageText()
  message!: string;
}

export class MessageIdParams {
  @ApiProperty({ description: 'Message id', pattern: MESSAGE_ID_PATTERN.source, example: ID_EXAMPLE })
  @Matches(MESSAGE_ID_PATTERN, { message: 'must be a message id (msg_ followed by 28 hex digits)' })
  id!: string;
}

/** Message ids are strings that sort by creation time, so the cursor is a message id. */
export class ListMessagesQueryDto extends IntersectionType(PageLimit, FeedOrderQuery) {
  @ApiPropertyOptional({ description: 'The last id of the previous page', pattern: MESSAGE_ID_PATTERN.source })
  @IsOptional()
  @Matches(MESSAGE_ID_PATTERN, { message: 'must be a message id (msg_ followed by 28 hex digits)' })
  after?: string;

  @ApiPropertyOptional({ enum: MESSAGE_STATUSES })
  @IsOptional()
  @IsIn(MESSAGE_STATUSES)
  status?: MessageStatus;
}

@ApiSchema({ name: 'Message' })
export class MessageSchema {
  @ApiProperty({
    description: 'Identifier of the created message',
    pattern: MESSAGE_ID_PATTERN.source,
    example: ID_EXAMPLE,
  })
  id!: string;

  @ApiProperty({ description: 'Echo of the text', maxLength: MESSAGE_MAX_LENGTH, example: 'Hello, pet store!' })
  message!: string;

  @ApiProperty({
    enum: MESSAGE_STATUSES,
    enumName: 'MessageStatus',
    description: 'Processing status: `queued` on acceptance, then `processing`, then `processed` or `failed`',
    example: 'queued',
  })
  status!: MessageStatus;

  @ApiProperty({ format: 'date-time', description: 'Creation time' })
  createdAt!: string;
}

@ApiSchema({ name: 'MessageResult' })
export class MessageResultSchema {
  @ApiProperty({ type: 'integer', description: 'Length of the text in Unicode characters', example: 17 })
  characters!: number;

  @ApiProperty({
    description: 'SHA-256 of the UTF-8 text, hex',
    pattern: '^[0-9a-f]{64}$',
    example: '5f056397d1ebb29ad3574201347d02d94855555293db8852d89c9c3e8414fc0b',
  })
  sha256!: string;
}

@ApiSchema({ name: 'MessageDetail' })
export class MessageDetailSchema extends MessageSchema {
  @ApiProperty({ type: 'integer', description: 'Processing attempts started so far', example: 1 })
  attempts!: number;

  @ApiProperty({ type: MessageResultSchema, nullable: true, description: 'Set once `processed`' })
  result!: MessageResultSchema | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why processing failed; set once `failed`' })
  failureReason!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  processedAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  failedAt!: string | null;
}
