import { apiAndChromium } from '../support/browser';
import { describeWithChromium } from '../support/external-binary';

/**
 * /docs, where users paste keys into "Authorize", has a Content-Security-Policy: without one, any
 * script injected into the page (a hostile description, a compromised asset) could read the key.
 */
describeWithChromium('/docs Content-Security-Policy', () => {
  const running = apiAndChromium();

  const policyOf = async (path: string) => {
    const res = await fetch(`${running.api.url}${path}`);
    await res.text();
    return res.headers.get('content-security-policy') ?? '';
  };

  it('the page and its assets carry a policy: own scripts only, requests only to this origin, no framing', async () => {
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui-init.js']) {
      const directives = Object.fromEntries(
        (await policyOf(path)).split(';').map((d) => {
          const [name, ...values] = d.trim().split(/\s+/);
          return [name, values.join(' ')];
        }),
      );
      expect(directives).toMatchObject({
        'default-src': "'none'",
        'script-src': "'self'",
        'connect-src': "'self'",
        'frame-ancestors': "'none'",
        'form-action': "'none'",
        'base-uri': "'none'",
      });
    }
  });

  it('Chromium renders the operations under the policy with no violation, and refuses an injected script', async () => {
    const page = await running.chromium.browser.newPage();
    const pageErrors: string[] = [];
    const offOrigin: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('request', (req) => {
      if (!req.url().startsWith(running.api.url) && !req.url().startsWith('data:')) offOrigin.push(req.url());
    });
    // Page-side code as strings: the tests compile without the DOM library.
    await page.evaluateOnNewDocument(
      "window.violations = []; document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    );
    await page.goto(`${running.api.url}/docs`, { waitUntil: 'networkidle0', timeout: 30_000 });
    await page.waitForSelector('.opblock-summary', { timeout: 15_000 });
    expect(await page.evaluate('window.violations')).toEqual([]);

    // An inline script the policy allowed has run once appended; one it refused is reported as a violation.
    const injected = await page.evaluate(`(async () => {
      const reported = new Promise((resolve) => document.addEventListener('securitypolicyviolation', resolve, { once: true }));
      const script = document.createElement('script');
      script.textContent = 'window.pwned = true';
      document.body.append(script);
      if (!window.pwned) await reported;
      return window.pwned ?? false;
    })()`);
    expect(injected).toBe(false);
    expect(pageErrors).toEqual([]);
    expect(offOrigin).toEqual([]);
    await page.close();
  });
});
