# syntax=docker/dockerfile:1
# One image for the API, the worker and the operator CLI; the command picks the app.

# Node 24 LTS in the image, the only line package.json engines allow.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY packages ./packages
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000 3001
# The API by default; the worker runs `node dist/apps/worker/main.js`, migrations `node dist/apps/cli/main.js migrate`.
CMD ["node", "dist/apps/api/main.js"]
