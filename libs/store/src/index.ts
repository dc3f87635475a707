export * from './views';
export * from './pet-status';
