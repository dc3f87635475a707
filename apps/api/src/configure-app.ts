import { INestApplication, Logger } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { AppConfig, Clock } from '@app/config';
import {
  accessLog,
  observeHttpRequest,
  httpTracingMiddleware,
  PinoNestLogger,
  rootLogger,
  tracingEnabled,
} from '@app/observability';
import { consoleAssets, consoleDirectory } from './console/console-assets';
import { jsonBody, rejectNulInUrl, requireJsonContentType } from './gate/body-parsing';
import { methodNotAllowed } from './gate/method-not-allowed.middleware';
import { mountsOutside, notFound, notFoundOutside } from './gate/not-found.middleware';
import { ProxyTrustWatch, TrustFn } from './gate/proxy-trust-watch.middleware';
import { PublicPaths } from './gate/public-routes';
import { RequestGateMiddleware } from './gate/request-gate.middleware';
import { docsPageDocument } from './openapi/docs-page-document';
import { serveDocument } from './openapi/document-serving.middleware';
import { buildOpenApiDocument, configuredSunsets } from './openapi/openapi-document';
import { Middleware, oneLayer } from './pipeline/one-layer';
import { securityHeaders } from './pipeline/security-headers';
import { API_PREFIX, RouteTable } from './policy/route-table';

// No API key, no rate limit.
const DOCUMENT_PATHS = ['/openapi.json', '/v1/openapi.json'];
const DOCS_PATH = '/docs';
const CONSOLE_PATH = '/console';
const MOUNTS = [...DOCUMENT_PATHS, DOCS_PATH, CONSOLE_PATH];

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

/** Used by main.ts and by the tests, so the tests exercise exactly the production stack. */
export function configureApp(app: NestExpressApplication): INestApplication {
  const config = app.get(AppConfig);
  const gate = app.get(RequestGateMiddleware);
  const routes = app.get(RouteTable);
  const publicPaths = PublicPaths.of(app, [DOCS_PATH, CONSOLE_PATH], DOCUMENT_PATHS);
  app.useLogger(new PinoNestLogger(rootLogger(config, 'api')));
  app.set('trust proxy', typeof config.trustProxy === 'number' ? config.trustProxy || false : config.trustProxy);
  app.set('etag', false);
  app.disable('x-powered-by');
  // First, so the server span covers the whole stack.
  if (tracingEnabled()) app.use(httpTracingMiddleware);
  const trustFn = (app.getHttpAdapter().getInstance() as { get(name: string): TrustFn }).get('trust proxy fn');
  const trustWatch = new ProxyTrustWatch(trustFn, app.get(Clock), new Logger(ProxyTrustWatch.name));
  const front = [
    accessLog(rootLogger(config, 'api'), observeHttpRequest),
    trustWatch.use,
    securityHeaders(),
  ];
  // Kept serialised only: the parsed document is thousands of objects for every mark-compact to walk.
  const document = JSON.stringify(buildOpenApiDocument(app, { routes, sunsets: configuredSunsets(config) }));
  const intake = [
    rejectNulInUrl,
    methodNotAllowed(routes),
    requireJsonContentType,
    jsonBody(config.bodyLimitBytes),
    notFoundOutside(API_PREFIX, publicPaths.routes, MOUNTS),
  ];
  const open = oneLayer(...intake);
  const gated = oneLayer((req, res, next) => gate.use(req, res, next), ...intake);
  const admit: Middleware = (req, res, next) => (publicPaths.has(req.path) ? open : gated)(req, res, next);
  // CORS answers a preflight after the headers and before the gate, in Nest's layer; without it, one layer does all.
  if (config.corsOrigins.length) {
    app.use(oneLayer(...front));
    app.enableCors({ origin: config.corsOrigins, exposedHeaders: ['*'] });
    app.use(admit);
  } else app.use(oneLayer(...front, admit));
  app.setGlobalPrefix(API_PREFIX, { exclude: publicPaths.routes.map((path) => path.slice(1)) });

  app.use(DOCUMENT_PATHS, serveDocument(document));
  app.use(DOCS_PATH, (_req: unknown, res: { setHeader: (name: string, value: string) => void }, next: () => void) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    next();
  });
  app.use(CONSOLE_PATH, consoleAssets(consoleDirectory()));
  SwaggerModule.setup(DOCS_PATH.slice(1), app, docsPageDocument(document), {
    customSiteTitle: 'Pet Store API reference',
    // The document is served at DOCUMENT_PATHS only, built once (no /docs-json or /docs-yaml twins).
    raw: false,
    // The page talks to this origin only.
    swaggerOptions: { url: DOCUMENT_PATHS[0], validatorUrl: null },
  });
  // Last of the mounts, so what they do not serve gets the Error body; at their paths only, so /v1 skips it.
  app.use(mountsOutside(API_PREFIX, MOUNTS), notFound);
  return app;
}
