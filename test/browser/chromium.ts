/**
 * Headless Chromium for the browser tier: Debian's /usr/bin/chromium driven by playwright-core (no browser
 * download, ever), with every request that leaves loopback aborted, so the Temporal UI's news feed and version
 * checks never reach the network.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env['PULSE_CHROMIUM'] ?? '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
  // CI containers often give /dev/shm 64 MB, too little for a renderer: use /tmp instead.
  '--disable-dev-shm-usage',
];

/** Why the browser tier cannot run here, or null when it can. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} is not installed (Debian: apt-get install -y chromium)`;
}

export interface LocalBrowser {
  browser: Browser;
  context: BrowserContext;
  /** URLs the context refused because they were not on loopback. */
  blocked: string[];
  close(): Promise<void>;
}

function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
  } catch {
    return false;
  }
}

/** Launches Chromium with a context that only talks to 127.0.0.0/8 (data: and blob: URLs stay allowed). */
export async function launchLocalBrowser(): Promise<LocalBrowser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true });
  const blocked: string[] = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1600 }, timezoneId: 'UTC', locale: 'en-US' });
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (isLoopback(url) || /^(data|blob):/.test(url)) return route.continue();
      blocked.push(url);
      return route.abort('blockedbyclient');
    });
    let closed = false;
    return {
      browser,
      context,
      blocked,
      async close() {
        if (closed) return;
        closed = true;
        await browser.close().catch(() => undefined);
      },
    };
  } catch (e) {
    await browser.close().catch(() => undefined);
    throw e;
  }
}
