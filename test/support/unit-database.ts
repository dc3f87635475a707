// Kept only for libs/events/src/transaction.service.spec.ts (helper h3's file): delete once it imports @app/testing.
export { unitDatabase } from '@app/testing';
