export * from './address-guard';
export * from './signature';
export * from './views';
