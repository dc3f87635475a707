import { INestApplicationContext } from '@nestjs/common';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { ARTIFACTS, Chromium, launchChromium } from '../../support/browser';
import { eventually, HttpClient } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { isSignedBy, WebhookReceiver } from '@app/testing';
import { describeWithChromium } from '../../support/external-binary';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const VIEWS = [
  { nav: 'Overview', heading: 'Plan and limits' },
  { nav: 'Keys', heading: 'API keys' },
  { nav: 'Webhooks', heading: 'Webhooks' },
  { nav: 'Messages and events', heading: 'Recent messages' },
];

/** /console in Debian's Chromium, as a person uses it: a pasted key, then the views. */
describeWithChromium('the console (/console) in a real browser', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let chromium: Chromium;
  let receiver: WebhookReceiver;
  const extraReceivers: WebhookReceiver[] = [];
  let owner: HttpClient;
  let ownerKey: string;

  beforeAll(async () => {
    // Retries soon after a failed attempt, so a delivery with two attempts is quick to make.
    const env = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_BACKOFF_MS: '100' };
    receiver = await new WebhookReceiver().start();
    [api, worker, chromium] = await Promise.all([startApi(env), startWorker(env), launchChromium()]);
    ownerKey = (await createAccount(api, 'business')).apiKey;
    owner = new HttpClient(api.url, ownerKey);
    // Something to look at: a webhook, a message and the events they make.
    const hook = await owner.post('/v1/webhooks', { url: receiver.url, events: ['message.processed', 'pet.created'] });
    expect(hook.status).toBe(201);
    await owner.post('/v1/messages', { message: 'hello from the console test' });
    await owner.post('/v1/pets', { name: 'Rex' });
  });
  afterAll(() =>
    closeAll([
      () => chromium?.close(),
      () => worker?.close(),
      () => api?.close(),
      () => receiver?.close(),
      () => Promise.all(extraReceivers.map((r) => r.close())),
    ]),
  );

  async function openPage(): Promise<Page> {
    const page = await chromium.browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    // Collected from the first script on: a policy violation or a page error fails the test that saw it.
    await page.evaluateOnNewDocument(`
      window.problems = [];
      document.addEventListener('securitypolicyviolation', (e) => window.problems.push('CSP: ' + e.violatedDirective + ' ' + e.blockedURI));
    `);
    page.on('pageerror', (err) => void page.evaluate(`window.problems.push(${JSON.stringify(String(err))})`));
    return page;
  }

  /** The sign-in form, rendered and styled: the app renders it from its one script, and asks nothing before a key. */
  const openConsole = (page: Page) => page.goto(`${api.url}/console/`, { waitUntil: 'load' });
  /** Pastes `key` into the sign-in form: one input event with the whole key, as a paste makes. */
  async function pasteKey(page: Page, key: string): Promise<void> {
    await page.focus('#api-key');
    await page.keyboard.sendCharacter(key);
  }

  async function signIn(page: Page, key = ownerKey): Promise<void> {
    await openConsole(page);
    await pasteKey(page, key);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=plan]');
  }

  const show = async (page: Page, nav: string, heading: string) => {
    await page.click(`nav ::-p-text(${nav})`);
    await page.waitForSelector(`h2 ::-p-text(${heading})`);
  };
  const problems = (page: Page) => page.evaluate('window.problems') as Promise<string[]>;

  /** The hour table under the 24-hour chart: [start, admitted, refused, bans] per row. */
  const hourRows = (page: Page) =>
    page.$$eval('[data-testid=usage-table-hour] tbody tr', (rows) =>
      rows.map((r) => [
        r.getAttribute('data-start'),
        ...[...r.querySelectorAll('td')].map((c) => Number(c.textContent)),
      ]),
    );

  it('serves the page under a strict Content-Security-Policy that it never violates', async () => {
    const res = await fetch(`${api.url}/console/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("connect-src 'self'");

    const page = await openPage();
    await signIn(page);
    for (const v of VIEWS) await show(page, v.nav, v.heading);
    expect(await problems(page)).toEqual([]);
    await page.close();
  });

  it('keeps the pasted key in sessionStorage only, never in the URL, a cookie or localStorage', async () => {
    const page = await openPage();
    await signIn(page);
    const stored = await page.evaluate(`({
      session: Object.values(sessionStorage),
      local: Object.keys(localStorage).length,
      cookies: document.cookie,
      url: location.href,
    })`);
    expect(stored).toEqual({ session: [ownerKey], local: 0, cookies: '', url: `${api.url}/console/` });
    await page.close();
  });

  it("creates a key, shows its secret once, and the chart's latest bucket counts requests made with it", async () => {
    const page = await openPage();
    await signIn(page);
    await show(page, 'Keys', 'API keys');
    await page.type('input[name=name]', 'made in the console');
    await page.click('button ::-p-text(Create key)');
    const secret = await (await page.waitForSelector('[data-testid=secret]'))!.evaluate((el) => el.textContent ?? '');
    expect(secret).toMatch(/^pst_[0-9A-Za-z]+$/);
    await page.click('button ::-p-text(Done)');
    expect(await page.$('[data-testid=secret]')).toBeNull();

    await show(page, 'Overview', 'Plan and limits');
    // The key list arrives after the page: wait for the new key's option.
    const option = await page.waitForSelector('select option ::-p-text(made in the console)');
    await page.select('select', (await option!.evaluate((o) => (o as unknown as { value: string }).value)) as string);
    await page.waitForSelector('[data-testid=usage-table-hour] tbody tr');
    const before = await hourRows(page);
    const made = new HttpClient(api.url, secret);
    for (let i = 0; i < 3; i++) expect((await made.get('/v1/account')).status).toBe(200);

    await page.click('button ::-p-text(Refresh)');
    const after = await eventually(async () => {
      const rows = await hourRows(page);
      return rows.at(-1)?.[1] !== before.at(-1)?.[1] ? rows : undefined;
    });
    expect(after.at(-1)?.[0]).toBe(before.at(-1)?.[0]);
    expect(after.at(-1)?.slice(1)).toEqual([3, 0, 0]);
    await page.close();
  });

  it('revokes a key, after which the API refuses it', async () => {
    const issued = await owner.post<{ id: number; secret: string }>('/v1/keys', { name: 'to revoke' });
    const page = await openPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page);
    await show(page, 'Keys', 'API keys');
    // The key list arrives after the heading.
    await (await page.waitForSelector(`button[aria-label="Revoke key to revoke"]`))!.click();
    await page.waitForFunction(`!document.querySelector('tr[data-key-id="${issued.body.id}"]')`);

    expectErrorBody(await new HttpClient(api.url, issued.body.secret).get('/v1/account'), 401, 'invalid_api_key');
    await page.close();
  });

  it("sends a webhook's test delivery and lists it with the receiver's status code", async () => {
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    await (await page.waitForSelector('button ::-p-text(Send test delivery)'))!.click();
    await page.click('button ::-p-text(Deliveries)');
    const row = await eventually(async () => {
      await page.click('caption button ::-p-text(Refresh)');
      await new Promise((r) => setTimeout(r, 200));
      const rows = await page.$$eval('table[data-testid^=deliveries] tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((c) => c.textContent)),
      );
      return rows.find((r) => r[0] === 'webhook.test' && r[1] === 'delivered');
    });
    expect(row?.[3]).toBe('200');
    await page.close();
  });

  type Hook = { id: number; url: string; secret: string; events: string[] };
  /** A webhook of its own for a test, made through the API; its card in the Webhooks view. */
  async function ownWebhook(events: string[], respond?: (n: number) => number) {
    const r = await new WebhookReceiver(respond).start();
    extraReceivers.push(r);
    const res = await owner.post<Hook>('/v1/webhooks', { url: r.url, events });
    expect(res.status).toBe(201);
    return { hook: res.body, receiver: r, card: `li[data-webhook-id="${res.body.id}"]` };
  }
  /** Replaces an input's value as a person would: select all, type. */
  const retype = async (page: Page, selector: string, text: string) => {
    const input = (await page.waitForSelector(selector))!;
    await input.click({ count: 3 });
    await input.type(text);
  };

  it('edits a webhook (URL, description, events, enabled) and the API has the change', async () => {
    const { hook, card } = await ownWebhook(['pet.created', 'pet.deleted']);
    const elsewhere = await new WebhookReceiver().start();
    extraReceivers.push(elsewhere);
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    await (await page.waitForSelector(`${card} button ::-p-text(Edit)`))!.click();
    const form = `${card} form[aria-label^="Edit"]`;
    await retype(page, `${form} input[name=url]`, elsewhere.url);
    await retype(page, `${form} input[name=description]`, 'edited in the console');
    await page.click(`${form} input[value="pet.deleted"]`);
    await page.click(`${form} input[value="order.completed"]`);
    await page.click(`${form} input[name=enabled]`);
    await page.click(`${form} button[type=submit]`);
    // The form closes once the API answered; before that the text matches the input being edited.
    await page.waitForSelector(form, { hidden: true });
    await page.waitForSelector(`${card} ::-p-text(edited in the console)`);

    const now = await owner.get(`/v1/webhooks/${hook.id}`);
    expect(now.body).toEqual(
      expect.objectContaining({
        url: elsewhere.url,
        description: 'edited in the console',
        events: ['pet.created', 'order.completed'],
        status: 'disabled',
      }),
    );
    expect(await problems(page)).toEqual([]);
    await page.close();
  });

  it("rotates a webhook's secret: the new one is shown once with the grace period's end, and signs deliveries", async () => {
    const { hook, receiver: r, card } = await ownWebhook(['order.cancelled']);
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    await (await page.waitForSelector(`${card} button ::-p-text(Rotate secret)`))!.click();
    const form = `${card} form[aria-label^="Rotate"]`;
    await retype(page, `${form} input[name=gracePeriodSeconds]`, '3600');
    await page.click(`${form} button[type=submit]`);
    const notice = (await page.waitForSelector('.secret'))!;
    const secret = await notice.$eval('[data-testid=secret]', (el) => el.textContent ?? '');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(secret).not.toBe(hook.secret);
    expect(await notice.evaluate((el) => el.textContent)).toContain('deliveries are also signed with the old one');
    await page.click('button ::-p-text(Done)');
    expect(await page.$('[data-testid=secret]')).toBeNull();

    const { previousSecretExpiresAt } = (
      await owner.get<{ previousSecretExpiresAt: string }>(`/v1/webhooks/${hook.id}`)
    ).body;
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect((await owner.post(`/v1/webhooks/${hook.id}/test`)).status).toBe(202);
    const delivered = await eventually(async () => r.requests[0]);
    expect(isSignedBy(secret, delivered.body, delivered.headers)).toBe(true);
    expect(isSignedBy(hook.secret, delivered.body, delivered.headers)).toBe(true);
    await page.close();
  });

  /** The rows of a webhook's deliveries table (opened if closed), once `ready` holds for them. */
  async function deliveriesShown(page: Page, card: string, ready: (rows: (string | null)[][]) => boolean) {
    const toggle = (await page.waitForSelector(`${card} button ::-p-text(Deliveries)`))!;
    if ((await toggle.evaluate((b) => b.getAttribute('aria-expanded'))) !== 'true') await toggle.click();
    return eventually(async () => {
      await page.click(`${card} caption button ::-p-text(Refresh)`);
      await new Promise((res) => setTimeout(res, 200));
      const rows = await page.$$eval(`${card} table[data-testid^=deliveries] tbody tr[data-delivery-id]`, (trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-delivery-id'),
          ...[...tr.querySelectorAll('td')].map((c) => c.textContent),
        ]),
      );
      return ready(rows) ? rows : undefined;
    });
  }

  it("shows each attempt of a delivery: its status, duration, error and the answer's first bytes", async () => {
    const { receiver: r, card } = await ownWebhook(['category.created'], (n) => (n === 1 ? 503 : 200));
    r.answerBody = 'receiver says hello';
    expect((await owner.post('/v1/categories', { name: `attempts-${Date.now()}` })).status).toBe(201);
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    const [[deliveryId]] = await deliveriesShown(page, card, (rows) => rows[0]?.[2] === 'delivered');
    await page.click(`${card} button[aria-label="Attempts of delivery ${deliveryId}"]`);
    const rows = await eventually(async () => {
      const found = await page.$$eval(`table[data-testid="attempts-${deliveryId}"] tbody tr`, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent)),
      );
      return found.length === 2 ? found : undefined;
    });
    expect(rows.map((row) => [row[0], row[2], row[4], row[5]])).toEqual([
      ['1', '503', 'HTTP 503', 'receiver says hello'],
      ['2', '200', '—', 'receiver says hello'],
    ]);
    for (const row of rows) expect(Number(row[3])).toBeGreaterThanOrEqual(0);
    await page.close();
  });

  it('recovers a webhook: the failed event is sent again and the webhook is active', async () => {
    let answer = 500;
    const { hook, receiver: r, card } = await ownWebhook(['category.created'], () => answer);
    expect((await owner.post('/v1/categories', { name: `recover-${Date.now()}` })).status).toBe(201);
    // Disabled while it retries: its next attempt fails the delivery at once.
    await eventually(async () => r.requests.length > 0);
    expect((await owner.patch(`/v1/webhooks/${hook.id}`, { enabled: false })).status).toBe(200);
    await eventually(async () => (await owner.get(`/v1/webhooks/${hook.id}/deliveries`)).body[0]?.status === 'failed');
    answer = 200;
    const seen = r.requests.length;
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    await (await page.waitForSelector(`${card} button ::-p-text(Recover)`))!.click();
    await (await page.waitForSelector(`${card} form button[type=submit] ::-p-text(Recover)`))!.click();
    await page.waitForSelector(`${card} [role=status] ::-p-text(1 event queued again)`);
    await eventually(async () => r.requests.length === seen + 1);
    expect(JSON.parse(r.requests[seen].body).type).toBe('category.created');
    expect((await owner.get(`/v1/webhooks/${hook.id}`)).body.status).toBe('active');
    await page.waitForSelector(`${card} ::-p-text(— active)`);
    await page.close();
  });

  it('resends a delivery: the receiver gets it again with the same webhook-id', async () => {
    const { hook, receiver: r, card } = await ownWebhook(['order.cancelled']);
    expect((await owner.post(`/v1/webhooks/${hook.id}/test`)).status).toBe(202);
    const page = await openPage();
    await signIn(page);
    await show(page, 'Webhooks', 'Webhooks');
    const [[deliveryId]] = await deliveriesShown(page, card, (rows) => rows[0]?.[2] === 'delivered');
    await page.click(`${card} button[aria-label="Resend delivery ${deliveryId}"]`);
    const status = await page.waitForSelector(`${card} [role=status] ::-p-text(resent as delivery)`);
    const resentId = /resent as delivery (\d+)/.exec((await status!.evaluate((el) => el.textContent)) ?? '')?.[1];

    const again = await eventually(async () => r.requests[1]);
    expect(again.headers['webhook-id']).toBe(r.requests[0].headers['webhook-id']);
    const listed = await deliveriesShown(
      page,
      card,
      (rows) => rows[0]?.[0] === resentId && rows[0]?.[2] === 'delivered',
    );
    expect(listed.map((row) => row[0])).toEqual([resentId, deliveryId]);
    await page.close();
  });

  it('can be used with the keyboard alone: every view is reached by Tab and Enter', async () => {
    const page = await openPage();
    await openConsole(page);
    await page.keyboard.press('Tab'); // the skip link
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('api-key');
    await page.keyboard.type(ownerKey);
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=plan]');

    const focused = () => page.evaluate(`document.activeElement?.textContent ?? ''`) as Promise<string>;
    // Forward through the sections, then back to the first one.
    for (const [v, key] of [
      [VIEWS[1], 'Tab'],
      [VIEWS[2], 'Tab'],
      [VIEWS[3], 'Tab'],
      [VIEWS[0], 'Shift+Tab'],
    ] as const) {
      for (let i = 0; i < 12 && (await focused()) !== v.nav; i++) {
        if (key === 'Tab') await page.keyboard.press('Tab');
        else {
          await page.keyboard.down('Shift');
          await page.keyboard.press('Tab');
          await page.keyboard.up('Shift');
        }
      }
      expect(await focused()).toBe(v.nav);
      await page.keyboard.press('Enter');
      await page.waitForSelector(`h2 ::-p-text(${v.heading})`);
    }
    await page.close();
  });

  it('has no serious or critical accessibility violations (axe-core) on any view, and leaves a screenshot of each', async () => {
    const page = await openPage();
    mkdirSync(ARTIFACTS, { recursive: true });
    await openConsole(page);
    const found: { view: string; id: string; impact: string | null }[] = [];
    const audit = async (view: string) => {
      // Through the DevTools protocol: the page's own policy rightly refuses injected scripts.
      await page.evaluate(AXE);
      const violations = (await page.evaluate(
        `axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`,
      )) as { id: string; impact: string | null }[];
      found.push(
        ...violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ view, ...v })),
      );
      await page.screenshot({ path: join(ARTIFACTS, `console-${view}.png`), fullPage: true });
    };
    await audit('sign-in');
    // A key of its own: /usage has a budget per key (30 a minute), and every sign-in above spent two of ownerKey's.
    await pasteKey(page, (await createAccount(api, 'business')).apiKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=usage-table-hour] tbody tr');
    for (const v of VIEWS) {
      await show(page, v.nav, v.heading);
      await page.waitForNetworkIdle();
      await audit(v.nav.toLowerCase().replace(/ /g, '-'));
    }
    expect(found).toEqual([]);
    await page.close();
  });
});
