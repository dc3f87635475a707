import { INestApplicationContext } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { OpsServerService } from '../../../apps/worker/src/ops/ops-server.service';
import { JobCatalog } from '@app/jobs';
import { WORKER_FEATURES } from '../../../apps/worker/src/worker.module';
import { ARTIFACTS, Chromium, launchChromium } from '../../support/browser';
import { closeAll, startWorker } from '../../support/test-apps';
import { describeWithChromium } from '../../support/external-binary';

const TOKEN = 'queue-dashboard-test-token-0123456789';
const SCREENSHOTS = join(ARTIFACTS, 'screenshots');

function opsUrl(worker: INestApplicationContext): string {
  return `http://127.0.0.1:${worker.get(OpsServerService).port()}`;
}

/** bull-board on the worker's ops port, behind QUEUE_DASHBOARD_TOKEN. */
describe('queue dashboard', () => {
  describeWithChromium('with a token configured', () => {
    let worker: INestApplicationContext;
    let url: string;
    let chromium: Chromium;

    beforeAll(async () => {
      worker = await startWorker({ QUEUE_DASHBOARD_TOKEN: TOKEN });
      url = opsUrl(worker);
      chromium = await launchChromium();
    });
    afterAll(() => closeAll([() => chromium?.close(), () => worker?.close()]));

    it('shows every queue in Chromium opened once with ?token=, which leaves the address', async () => {
      const page = await chromium.browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(String(err)));
      // Nothing leaves for a third party (bull-board's page links Google Fonts; CSP refuses it).
      const elsewhere: string[] = [];
      page.on('request', (r) => void (r.url().startsWith(url) || elsewhere.push(r.url())));
      // (Strings: the page's code runs in the browser, and the project's types have no DOM.)
      await page.evaluateOnNewDocument(
        "window.blocked = []; document.addEventListener('securitypolicyviolation', (e) => window.blocked.push(e.blockedURI));",
      );
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${url}/queues?token=${TOKEN}`, { waitUntil: 'networkidle0', timeout: 30_000 });
      expect(page.url()).toBe(`${url}/queues`);

      for (const name of new JobCatalog(WORKER_FEATURES).queues) {
        await page.waitForSelector(`::-p-text(${name})`, { visible: true, timeout: 15_000 });
      }
      const cookies = await chromium.browser.cookies();
      expect(cookies).toEqual([
        expect.objectContaining({ name: 'queue_dashboard', httpOnly: true, sameSite: 'Strict', path: '/queues' }),
      ]);
      expect(cookies[0].value).not.toContain(TOKEN);
      expect(pageErrors).toEqual([]);
      expect(elsewhere.length).toBeGreaterThan(0);
      expect(await page.evaluate('window.blocked')).toEqual(elsewhere);

      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'queue-dashboard.png'), fullPage: true });
    });

    it('answers the dashboard API to the token as a bearer token', async () => {
      const res = await fetch(`${url}/queues/api/queues`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { queues: { name: string }[] };
      expect(body.queues.map((q) => q.name).sort()).toEqual(new JobCatalog(WORKER_FEATURES).queues.sort());
    });

    it.each([
      ['no token', {}, '/queues'],
      ['no token (API)', {}, '/queues/api/queues'],
      ['a wrong bearer token', { Authorization: `Bearer ${TOKEN}x` }, '/queues/api/queues'],
      ['a wrong ?token=', {}, `/queues?token=${TOKEN.slice(1)}`],
      ['the token itself as the cookie', { Cookie: `queue_dashboard=${TOKEN}` }, '/queues/api/queues'],
    ])('refuses %s with 401 and sets no cookie', async (_, headers: Record<string, string>, path) => {
      const res = await fetch(`${url}${path}`, { headers, redirect: 'manual' });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(await res.json()).toEqual(expect.objectContaining({ code: 'invalid_authorization', status: 401 }));
    });

    it('keeps /health/live and /metrics open', async () => {
      expect((await fetch(`${url}/health/live`)).status).toBe(200);
      expect((await fetch(`${url}/metrics`)).status).toBe(200);
    });
  });

  describe('without a token configured', () => {
    it('is not there: 404, even with a bearer token', async () => {
      const worker = await startWorker({ QUEUE_DASHBOARD_TOKEN: '' });
      try {
        const url = opsUrl(worker);
        for (const path of ['/queues', '/queues/api/queues', `/queues?token=${TOKEN}`]) {
          const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
          expect(res.status).toBe(404);
        }
      } finally {
        await worker.close();
      }
    });
  });
});
