# syntax=docker/dockerfile:1
# One image for the API, the worker and the operator CLI; the command picks the app.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY packages ./packages
COPY scripts ./scripts
RUN npm run build

FROM node:24-bookworm-slim AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=dev alone keeps ts-node and typescript (optional peers of typeorm and valibot): --legacy-peer-deps ignores peers.
RUN npm ci --omit=dev --legacy-peer-deps --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
# package.json config.nodeOptions, for every app the image runs: Node 24 sizes the young generation
# from the host's memory (docs/internals/decisions/0024-one-young-generation-size.md).
ENV NODE_OPTIONS="--max-semi-space-size=16"
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=runtime-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000 3001
# Liveness of whichever app runs: the API on PORT, else the worker on WORKER_PORT (slim images have no curl).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "const live = (port) => fetch('http://127.0.0.1:' + port + '/health/live', { signal: AbortSignal.timeout(3000) }).then((r) => r.ok); live(process.env.PORT || 3000).catch(() => live(process.env.WORKER_PORT || 3001)).then((ok) => process.exit(ok ? 0 : 1), () => process.exit(1));"]
# The API by default; the worker runs `node dist/apps/worker/src/main.js`, migrations `node dist/apps/cli/src/main.js migrate`.
CMD ["node", "dist/apps/api/src/main.js"]
