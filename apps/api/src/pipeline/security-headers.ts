import helmet from 'helmet';
import { fixedHeaders, Middleware } from './one-layer';

// Headers for legacy browsers, Flash and HTML documents are left out: each costs every answer.
export const HELMET_OPTIONS = {
  contentSecurityPolicy: false,
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const;

// Nothing else sets these (X-Content-Type-Options is set again by Express's static files and final handler).
export const SET_BY_HELMET_ALONE = [
  'Cross-Origin-Resource-Policy',
  'Referrer-Policy',
  'Strict-Transport-Security',
  'X-Frame-Options',
];

/** helmet's headers, recorded at boot and set on every answer. */
export const securityHeaders = (): Middleware => fixedHeaders(helmet(HELMET_OPTIONS) as Middleware, SET_BY_HELMET_ALONE);
