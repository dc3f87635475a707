export * from './api-error';
export * from './error-codes';
export * from './all-exceptions.filter';
export * from './validation';
export * from './input-rules';
export * from './if-match';
