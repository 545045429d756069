// Time to interactive of the chat page on a throttled phone-like profile: Chromium with the
// CPU slowed 4× and DevTools' "Fast 3G" network, from navigation until the page is
// hydrated and the send button follows the message box.
//
// Not part of the Playwright suite (it measures, it asserts nothing about behaviour).
// Run it against a server that serves the site build, for example one started by
// `cargo xtask run`:
//
//   DATBAN_BASE_URL=http://127.0.0.1:3000 node end2end/bench/hydrate.mjs [runs]
//
// Prints one line per run and the median; `BENCH_JSON=1` prints the numbers as JSON too.
// `BENCH_STORED=1` times a reload of a stored conversation instead (a weather question and
// its card, asked unthrottled first): the page then needs the restaurant parts' chunk
// before it hydrates.

import { chromium } from '@playwright/test';

const baseURL = process.env.DATBAN_BASE_URL ?? 'http://127.0.0.1:3000';
const runs = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);

// DevTools' "Fast 3G" preset (the same figures Puppeteer's PredefinedNetworkConditions
// use): 1.6 Mbit/s down and 750 kbit/s up at 90 % efficiency, 150 ms RTT × 3.75.
// CDP takes throughput in bytes per second.
const FAST_3G = {
  offline: false,
  downloadThroughput: ((1.6 * 1000 * 1000) / 8) * 0.9,
  uploadThroughput: ((750 * 1000) / 8) * 0.9,
  latency: 150 * 3.75,
};
const CPU_SLOWDOWN = 4;

// Runs in the page before any of its scripts: notes when `data-hydrated` turns true, in
// milliseconds since navigation started (performance.now()'s origin), so the number does
// not include the round trips of the test driver polling the page.
function watchHydration() {
  const mark = () => {
    const main = document.querySelector('main.chat');
    if (main && main.getAttribute('data-hydrated') === 'true' && !window.__hydratedAt) {
      window.__hydratedAt = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, {
    subtree: true,
    attributes: true,
    attributeFilter: ['data-hydrated'],
    childList: true,
  });
}

const stored = Boolean(process.env.BENCH_STORED);

/** Asks a weather question unthrottled; returns the conversation's address. */
async function storedConversation(page) {
  await page.goto(baseURL + '/');
  await page.waitForSelector('main.chat[data-hydrated="true"]');
  await page.getByRole('textbox', { name: 'Tin nhắn' }).fill('Thời tiết Hà Nội hôm nay thế nào?');
  await page.getByRole('button', { name: 'Gửi' }).click();
  await page.waitForSelector('[data-tool="getWeather"][data-state="output-available"]');
  await page.waitForFunction(() => !document.querySelector('[data-streaming="true"]'));
  return page.url();
}

async function once(browser) {
  const context = await browser.newContext({ locale: 'vi-VN' });
  const page = await context.newPage();
  await page.addInitScript(watchHydration);
  const address = stored ? await storedConversation(page) : baseURL + '/';
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', FAST_3G);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });

  // What went over the wire for the bundle, compressed as the browser asked for it.
  const urls = new Map();
  const transferred = {};
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    urls.set(requestId, { url: response.url, encoding: response.headers['content-encoding'] });
  });
  cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
    const entry = urls.get(requestId);
    const name = entry && new URL(entry.url).pathname.split('/').pop();
    if (name && /\.(wasm|js)$/.test(name)) {
      transferred[name] = { bytes: encodedDataLength, encoding: entry.encoding ?? 'identity' };
    }
  });

  await page.goto(address, { waitUntil: 'commit' });
  await page.waitForFunction(() => window.__hydratedAt !== undefined, null, {
    timeout: 120_000,
    polling: 50,
  });
  const hydratedAt = await page.evaluate(() => window.__hydratedAt);
  if (stored) {
    // The stored card must be there, live, when the page is interactive.
    const cards = await page.locator('[data-tool="getWeather"] article.weather').count();
    if (cards !== 1) throw new Error(`the stored weather card is not shown (${cards})`);
  }
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return { domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd };
  });

  // Hydrated must mean working: the send button follows the message box.
  const box = page.getByRole('textbox', { name: 'Tin nhắn' });
  const send = page.getByRole('button', { name: 'Gửi' });
  await box.fill('Xin chào');
  await send.waitFor({ state: 'visible' });
  if (!(await send.isEnabled())) {
    await page.waitForFunction(
      () => !document.querySelector('form.composer button[type=submit]').disabled,
      null,
      { timeout: 10_000 },
    );
  }
  await context.close();
  return { hydratedAt, ...timing, transferred };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const results = [];
try {
  for (let i = 0; i < runs; i++) {
    const result = await once(browser);
    results.push(result);
    const sizes = Object.entries(result.transferred)
      .map(([name, { bytes, encoding }]) => `${name} ${bytes} B ${encoding}`)
      .join(', ');
    console.log(
      `run ${i + 1}: hydrated ${result.hydratedAt.toFixed(0)} ms ` +
        `(DOMContentLoaded ${result.domContentLoaded.toFixed(0)} ms; ${sizes})`,
    );
  }
} finally {
  await browser.close();
}
const sorted = results.map((r) => r.hydratedAt).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(
  `hydrated${stored ? ' (stored conversation)' : ''} (Fast 3G, CPU ×${CPU_SLOWDOWN}): median ${median.toFixed(0)} ms, ` +
    `min ${sorted[0].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms over ${runs} runs`,
);
if (process.env.BENCH_JSON) console.log(JSON.stringify({ median, results }));
