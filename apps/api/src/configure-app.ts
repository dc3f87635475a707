import { INestApplication, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AppConfig } from '@app/config';
import { PinoNestLogger, rootLogger } from '@app/observability';
import { CONSOLE_CSP, consoleDirectory } from './console/console-assets';
import { acceptJsonBodies } from './gate/body-parsing';
import { REQUEST_GATE_FIELDS, RequestGate } from './gate/request-gate.hook';
import { docsPageDocument } from './openapi/docs-page-document';
import { documentRoute } from './openapi/document.route';
import { buildOpenApiDocument, configuredSunsets } from './openapi/openapi-document';
import { publicPathsOf } from './policy/route-policy.decorator';
import { API_PREFIX, RouteRegistry } from './policy/route-registry';

// No API key, no rate limit.
const DOCUMENT_PATHS = ['/openapi.json', '/v1/openapi.json'];
const DOCS_PATH = '/docs';
const CONSOLE_PATH = '/console';
// The mounts answer GET and HEAD.
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

// Users paste keys into /docs: only the page's own scripts run, and talk to this origin only.
// Inline styles stay (swagger-ui sets them); data: images are its icons.
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

// Headers for legacy browsers, Flash and HTML documents are left out: each costs every answer.
const SECURITY_HEADERS = {
  contentSecurityPolicy: false,
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const;

const below = (url: string, mount: string) => url === mount || url.startsWith(`${mount}/`);

/** The static pages' routes (swagger-ui's, the console's): public, each with its own headers. */
function mountsArePublic(route: RouteOptions): void {
  const headers: Record<string, string> | undefined = below(route.url, DOCS_PATH)
    ? { 'Content-Security-Policy': DOCS_CSP }
    : below(route.url, CONSOLE_PATH)
      ? { 'Content-Security-Policy': CONSOLE_CSP, 'Cache-Control': 'no-cache' }
      : undefined;
  if (!headers) return;
  route.config = { ...route.config, public: true };
  const own = async (_req: FastifyRequest, reply: FastifyReply) => void reply.headers(headers);
  route.onRequest = [...[route.onRequest ?? []].flat(), own];
}

/** Used by main.ts and by the tests, so the tests exercise exactly the production stack. */
export function configureApp(app: NestFastifyApplication): INestApplication {
  const config = app.get(AppConfig);
  const fastify = app.getHttpAdapter().getInstance();
  app.useLogger(new PinoNestLogger(rootLogger(config, 'api')));
  app.useSecurityHeaders(SECURITY_HEADERS);
  // A preflight is answered in Nest's CORS hook, before the gate.
  if (config.corsOrigins.length) app.enableCors({ origin: config.corsOrigins, exposedHeaders: ['*'] });
  for (const [field, initial] of Object.entries(REQUEST_GATE_FIELDS)) fastify.decorateRequest(field, initial);
  acceptJsonBodies(fastify);
  fastify.addHook('onRequest', app.get(RequestGate).onRequest);
  fastify.addHook('onRoute', mountsArePublic);
  app.get(RouteRegistry).watch(fastify);

  const controllers = app.get(DiscoveryService).getControllers();
  app.setGlobalPrefix(API_PREFIX, { exclude: publicPathsOf(controllers.map((c) => c.metatype as Type)) });

  // Kept serialised only: the parsed document is thousands of objects for every mark-compact to walk.
  const document = JSON.stringify(buildOpenApiDocument(app, { sunsets: configuredSunsets(config) }));
  const serveDocument = documentRoute(document);
  for (const url of DOCUMENT_PATHS) fastify.get(url, { config: { public: true } }, serveDocument);
  const consoleRoot = consoleDirectory();
  if (consoleRoot) {
    void fastify.register(fastifyStatic, {
      root: consoleRoot,
      prefix: `${CONSOLE_PATH}/`,
      index: false,
      cacheControl: false,
    });
    // The page links its files relatively: /console goes to /console/, which the router takes for the same route.
    fastify.get(CONSOLE_PATH, (req, reply) =>
      req.url.split('?')[0].endsWith('/') ? reply.sendFile('index.html') : reply.redirect(`${CONSOLE_PATH}/`, 301),
    );
  }
  // What a mount does not answer (another method) is a miss without a key, like a missing file below it.
  for (const url of [...DOCUMENT_PATHS, DOCS_PATH, `${DOCS_PATH}/*`, CONSOLE_PATH, `${CONSOLE_PATH}/*`]) {
    const config = { public: true } as const;
    fastify.route({ method: OTHER_METHODS, url, config, handler: (_req, reply) => void reply.callNotFound() });
  }
  SwaggerModule.setup(DOCS_PATH.slice(1), app, docsPageDocument(document), {
    customSiteTitle: 'Pet Store API reference',
    // The document is served at DOCUMENT_PATHS only, built once (no /docs-json or /docs-yaml twins).
    raw: false,
    // The page talks to this origin only.
    swaggerOptions: { url: DOCUMENT_PATHS[0], validatorUrl: null },
  });
  return app;
}
