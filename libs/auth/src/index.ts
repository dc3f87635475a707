export * from './api-key-format';
export * from './auth-context';
export * from './api-key-authenticator';
export * from './api-keys.service';
export * from './accounts.service';
export * from './auth.module';
