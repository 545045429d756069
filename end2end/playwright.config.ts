import { defineConfig } from '@playwright/test';

// `cargo xtask test` starts a fresh server on a free port and passes its address here;
// `cargo leptos end2end` serves on the configured site address.
const baseURL = process.env.DATBAN_BASE_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
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
