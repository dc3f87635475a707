export * from './api-error';
export * from './error-codes';
export * from './all-exceptions.filter';
export * from './validation';
