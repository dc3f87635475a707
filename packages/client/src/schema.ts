// The models of the committed OpenAPI document (openapi-typescript output of openapi.json), so
// the SDK's types change with the document and a breaking change fails its compilation.
import type { components } from '#openapi';
import type { QueryOf } from './operation-types';

type Schemas = components['schemas'];
/** openapi-typescript marks defaulted fields required (right for answers); in a request they may be left out. */
type Defaulted<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;
export type Pet = Schemas['Pet'];
export type NewPet = Defaulted<Schemas['NewPet'], 'status'>;
export type PetUpdate = Schemas['PetUpdate'];
export type Category = Schemas['Category'];
export type NewCategory = Schemas['NewCategory'];
export type CategoryUpdate = Schemas['CategoryUpdate'];
export type Order = Schemas['Order'];
export type NewOrder = Defaulted<Schemas['NewOrder'], 'quantity'>;
export type InventoryItem = Schemas['InventoryItem'];
export type InventoryUpdate = Schemas['InventoryUpdate'];
export type Message = Schemas['Message'];
export type MessageDetail = Schemas['MessageDetail'];
export type NewMessage = Schemas['NewMessage'];
export type Event = Schemas['Event'];
export type ApiKey = Schemas['ApiKey'];
export type NewApiKey = Defaulted<Schemas['NewApiKey'], 'scopes'>;
export type IssuedApiKey = Schemas['IssuedApiKey'];
export type Webhook = Schemas['Webhook'];
export type NewWebhook = Schemas['NewWebhook'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type WebhookUpdate = Schemas['WebhookUpdate'];
export type RotateWebhookSecret = Partial<Schemas['RotateWebhookSecret']>;
export type RecoverWebhook = Schemas['RecoverWebhook'];
export type RecoveredWebhook = Schemas['RecoveredWebhook'];
export type Account = Schemas['Account'];
export type RateLimitStatus = Schemas['RateLimitStatus'];
export type RotateApiKey = Partial<Schemas['RotateApiKey']>;
export type Delivery = Schemas['Delivery'];
export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type Usage = Schemas['Usage'];
export type UsageBucket = Schemas['UsageBucket'];
/** GET /v1/usage's query (ISO 8601 instants for from/to). */
export type UsageQuery = QueryOf<'GET', '/usage'>;
export type ErrorBody = Schemas['Error'];
export type ErrorCode = Schemas['ErrorCode'];
