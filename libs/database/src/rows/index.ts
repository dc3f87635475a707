/** Row types of the tables the features read (the schema itself is the migrations'). */
export * from './account.row';
export * from './api-key.row';
export * from './domain-event.row';
export * from './message.row';
export * from './pet.row';
export * from './webhook-delivery.row';
export * from './webhook.row';
export * from './json-row';
