/** The CommonJS modules loaded so far, by file name (`require.cache`). */
export type ModuleCache = Record<string, { paths?: string[] } | undefined>;

/**
 * Modules of one directory search the same node_modules folders, yet each keeps its own `module.paths` (7-10 joined
 * strings): after boot, modules with equal lists share one, ~25,000 objects fewer for each mark-compact to walk
 * (docs/internals/decisions/0052-smaller-heap-after-boot.md). Returns how many lists were replaced.
 */
export function shareModuleSearchPaths(cache: ModuleCache = require.cache as ModuleCache): number {
  const shared = new Map<string, string[]>();
  let replaced = 0;
  for (const mod of Object.values(cache)) {
    if (!mod || !Array.isArray(mod.paths) || !mod.paths.length) continue;
    const key = mod.paths.join('\0');
    const first = shared.get(key);
    if (first) {
      mod.paths = first;
      replaced++;
    } else {
      // Slices of one string, not a joined pair of strings per entry.
      mod.paths = key.split('\0');
      shared.set(key, mod.paths);
    }
  }
  return replaced;
}
