import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { apiAndChromium, ARTIFACTS } from '../../support/browser';
import { HttpClient } from '../../support/http';
import { describeWithChromium } from '../../support/external-binary';

/** /docs rendered by a real browser (Debian's Chromium, headless): swagger-ui shows every operation. */
describeWithChromium('/docs in a real browser', () => {
  const running = apiAndChromium();

  it('renders every operation of the document (method, path, summary) with no page error', async () => {
    const document = (await new HttpClient(running.api.url).get('/openapi.json')).body;
    const page = await running.chromium.browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(`${running.api.url}/docs`, { waitUntil: 'networkidle0', timeout: 30_000 });
    await page.waitForSelector('.opblock-summary', { timeout: 15_000 });

    const rendered = await page.$$eval('.opblock-summary', (blocks) =>
      blocks.map((b) => ({
        method: b.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase(),
        // Deprecated operations render their path in a differently named element.
        path: b.querySelector('.opblock-summary-path, .opblock-summary-path__deprecated')?.getAttribute('data-path'),
        summary: b.querySelector('.opblock-summary-description')?.textContent?.trim(),
      })),
    );
    const expected = Object.entries(document.paths as Record<string, Record<string, { summary: string }>>).flatMap(
      ([path, item]) => Object.entries(item).map(([method, op]) => ({ method, path, summary: op.summary })),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(rendered).toEqual(expect.arrayContaining(expected));
    expect(await page.$eval('.info .title', (el) => el.textContent)).toContain(document.info.title);
    expect(pageErrors).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: true });
  });
});
