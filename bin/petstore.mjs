#!/usr/bin/env node
// `npx petstore <command>`: the operator CLI, built first when dist/ is stale (as `npm run cli`), without npm's banner on stdout.
await import('../scripts/ensure-build.mjs');
await import('../dist/apps/cli/src/main.js');
