import { test, expect, type Page } from '@playwright/test';
import { send, settled, tool } from './helpers';

// Fails the test on any console error or failed request, so a missing wasm file or a
// hydration panic cannot pass unnoticed.
function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`page: ${err.message}`));
  page.on('requestfailed', (req) => errors.push(`request: ${req.url()} ${req.failure()?.errorText}`));
  return errors;
}

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the server-rendered page shows the Vietnamese chat heading', async ({ page }) => {
    const response = await page.goto('/');
    expect(response?.status()).toBe(200);
    await expect(page.locator('html')).toHaveAttribute('lang', 'vi');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Đặt bàn cùng trợ lý');
    await expect(page.getByRole('textbox', { name: 'Tin nhắn' })).toBeVisible();
    // Not hydrated: nothing ran in the browser.
    await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'false');
  });
});

test('after hydration the send button follows the message box', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/');
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');

  const box = page.getByRole('textbox', { name: 'Tin nhắn' });
  const send = page.getByRole('button', { name: 'Gửi' });
  await expect(send).toBeDisabled();
  await box.fill('Xin chào');
  await expect(send).toBeEnabled();
  await box.fill('   ');
  await expect(send).toBeDisabled();
  expect(errors).toEqual([]);
});

test('the hydrate bundle is served precompressed', async ({ request }) => {
  const wasm = await request.get('/pkg/datban.wasm', { headers: { 'accept-encoding': 'br' } });
  expect(wasm.status()).toBe(200);
  expect(wasm.headers()['content-encoding']).toBe('br');
  expect(wasm.headers()['content-type']).toBe('application/wasm');
  const js = await request.get('/pkg/datban.js', { headers: { 'accept-encoding': 'gzip' } });
  expect(js.headers()['content-encoding']).toBe('gzip');
});

test('health endpoint answers with status and version', async ({ request }) => {
  const response = await request.get('/healthz');
  expect(response.status()).toBe(200);
  const body = await response.json();
  expect(body.status).toBe('ok');
  expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
});

test('the page has a nonce CSP, and loading, hydrating and a weather chat violate nothing', async ({ page }) => {
  const errors = collectErrors(page);
  // Registered before any page script runs, so a blocked hydration script is seen too.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push(`${event.effectiveDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  const response = await page.goto('/');
  const headers = response?.headers() ?? {};
  const policy = headers['content-security-policy'] ?? '';
  expect(policy).toContain("script-src 'self' 'nonce-");
  expect(policy).toContain("'wasm-unsafe-eval'");
  expect(policy).not.toContain('unsafe-inline');
  const nonce = /'nonce-([^']+)'/.exec(policy)?.[1] ?? '';
  expect(nonce.length).toBeGreaterThanOrEqual(16);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('same-origin');

  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  // Every script the server rendered carries this response's nonce (browsers hide the
  // attribute's value, the property keeps it).
  const nonces = await page.evaluate(() =>
    Array.from(document.querySelectorAll('script')).map((script) => script.nonce),
  );
  expect(nonces.length).toBeGreaterThan(0);
  for (const value of nonces) expect(value).toBe(nonce);

  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await expect(tool(page, 'getWeather', 'output-available')).toBeVisible();
  await settled(page);

  const violations = await page.evaluate(
    () => (window as unknown as { cspViolations: string[] }).cspViolations,
  );
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
});
