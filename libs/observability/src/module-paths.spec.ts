import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ModuleCache, shareModuleSearchPaths } from './module-paths';

const root = join(__dirname, '..', '..', '..');

describe('shareModuleSearchPaths', () => {
  it('gives modules with equal search paths one list, and keeps unequal ones apart', () => {
    const cache: ModuleCache = {
      '/app/a.js': { paths: ['/app/node_modules', '/node_modules'] },
      '/app/b.js': { paths: ['/app/node_modules', '/node_modules'] },
      '/app/lib/c.js': { paths: ['/app/lib/node_modules', '/app/node_modules', '/node_modules'] },
      '/app/d.mjs': {},
      '/app/e.js': undefined,
    };
    expect(shareModuleSearchPaths(cache)).toBe(1);
    expect(cache['/app/a.js']!.paths).toBe(cache['/app/b.js']!.paths);
    expect(cache['/app/a.js']!.paths).toEqual(['/app/node_modules', '/node_modules']);
    expect(cache['/app/lib/c.js']!.paths).toEqual(['/app/lib/node_modules', '/app/node_modules', '/node_modules']);
    expect(cache['/app/d.mjs']!.paths).toBeUndefined();
  });

  // Fails if Node stops keeping a CommonJS module's search paths in `module.paths`, or stops reading them there.
  it("on Node's own cache (a child process: jest has its own): a directory's modules share a list that still resolves", () => {
    const script = `
      const { dirname } = require('node:path');
      const { shareModuleSearchPaths } = require('./libs/observability/src/module-paths');
      const [a, b] = ['express/lib/express.js', 'express/lib/application.js'].map((m) => require.cache[require.resolve(m)] ?? (require(m), require.cache[require.resolve(m)]));
      const apart = a.paths !== b.paths && dirname(a.filename) === dirname(b.filename);
      const replaced = shareModuleSearchPaths();
      const shared = a.paths === b.paths;
      const resolved = require.resolve('picomatch', { paths: [dirname(a.filename)] });
      const viaModule = (() => { try { return typeof a.require('picomatch'); } catch (e) { return String(e); } })();
      a.paths = [];
      const emptied = (() => { try { a.require('ipaddr.js'); return 'resolved'; } catch (e) { return e.code; } })();
      process.stdout.write(JSON.stringify({ apart, replaced, shared, first: b.paths[0], dir: dirname(b.filename), resolved, viaModule, emptied }));`;
    const out = execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    const r = JSON.parse(out) as Record<string, unknown>;
    expect(r.apart).toBe(true);
    expect(r.replaced).toBeGreaterThan(0);
    expect(r.shared).toBe(true);
    expect(r.first).toBe(`${r.dir as string}/node_modules`);
    expect(r.resolved).toContain('/node_modules/picomatch/');
    expect(r.viaModule).toBe('function');
    // Node reads the list at require time: emptied, a package never asked for from there no longer resolves.
    expect(r.emptied).toBe('MODULE_NOT_FOUND');
  });
});
