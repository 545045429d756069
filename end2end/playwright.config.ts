import { defineConfig } from '@playwright/test';

// `cargo xtask test` starts a fresh server on a free port and passes its address here;
// `cargo leptos end2end` serves on the configured site address. With several workers it
// starts a server for each (`DATBAN_BASE_URLS`, comma-separated): every worker process
// loads this file, and takes the server of its own slot, so one worker's bookings never
// fill the slots another's tests book. Tests that read DATBAN_BASE_URL see the same one.
const servers = (process.env.DATBAN_BASE_URLS ?? '').split(',').filter((url) => url !== '');
const slot = Number(process.env.TEST_PARALLEL_INDEX ?? '0');
if (servers.length > 0) {
  process.env.DATBAN_BASE_URL = servers[slot % servers.length];
}
const baseURL = process.env.DATBAN_BASE_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: Math.max(servers.length, 1),
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL,
    headless: true,
    locale: 'vi-VN',
    trace: 'off',
    launchOptions: {
      // Debian's Chromium: Playwright's own browser download cannot work on these machines.
      executablePath: '/usr/bin/chromium',
      // Without the background-networking flags Chromium keeps dialing out on a closed network.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
