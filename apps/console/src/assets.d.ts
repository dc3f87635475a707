/** esbuild bundles imported style sheets (scripts/build-console.mjs); TypeScript only needs to know they exist. */
declare module '*.css';
