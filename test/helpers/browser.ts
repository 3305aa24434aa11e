/**
 * Headless Chromium for the browser tests: Debian's, provisioned like the other tools (apt-get on a fresh
 * Debian machine when root, with Japanese fonts for the screenshots), driven by playwright-core, with no
 * background network and media allowed to play without a gesture (the call page's player).
 */
import { chromium, type Browser } from 'playwright-core';
import { ensureTools } from '../../cli/tools/provision.ts';

export async function launchBrowser(): Promise<Browser> {
  const { chromium: executablePath } = ensureTools({ browser: true, log: (l) => console.error(l) });
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}
