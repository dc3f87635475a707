import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { Browser } from 'puppeteer-core';
import { closeAll, RunningApi, startApi } from './test-apps';

const CHROMIUM = '/usr/bin/chromium';

/** Where tests leave files to look at (screenshots, logs); not committed. */
export const ARTIFACTS = join(__dirname, '..', 'artifacts');

export interface Chromium {
  browser: Browser;
  close(): Promise<void>;
}

/** Debian's Chromium, headless, with a fresh profile that close() removes. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  const profile = mkdtempSync(join(tmpdir(), 'petstore-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The API and Chromium, started before the enclosing describe's tests and closed after them: read them in the tests. */
export function apiAndChromium(): { api: RunningApi; chromium: Chromium } {
  const running = {} as { api: RunningApi; chromium: Chromium };
  beforeAll(async () => {
    [running.api, running.chromium] = await Promise.all([startApi(), launchChromium()]);
  });
  afterAll(() => closeAll([() => running.chromium?.close(), () => running.api?.close()]));
  return running;
}
