/** Every BullMQ queue of the service. Jobs are declared by the features that own them (defineJob). */
export enum QueueName {
  Messages = 'messages',
  Fulfilment = 'fulfilment',
  Events = 'events',
  Webhooks = 'webhooks',
}
