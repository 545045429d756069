import { test, expect, type Page } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// The rarely shown views are chunks of the hydrate bundle fetched on first use
// (app/src/lazy.rs, xtask/src/site.rs). Each test here fails if its chunk is missing from
// /pkg: the view it waits for is then replaced by the "could not load" notice.

/** The /pkg chunk files (split_*.wasm, chunk_*.wasm) the page has requested, with their statuses. */
function chunkRequests(page: Page): Map<string, number> {
  const seen = new Map<string, number>();
  page.on('response', (response) => {
    const name = new URL(response.url()).pathname.split('/').pop() ?? '';
    if (/^(split|chunk)_.*\.wasm$/.test(name)) seen.set(name, response.status());
  });
  return seen;
}

test('the restaurant chat fetches its parts chunk once interactive; a gift suggestion loads the gifts chunk and renders', async ({ page }) => {
  const chunks = chunkRequests(page);
  await open(page);
  // Fetched after hydration, before any reply needs it.
  await expect.poll(() => chunks.get('split_restaurant.wasm')).toBe(200);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await expect(tool(page, 'getWeather', 'output-available').locator('article.weather')).toBeVisible();
  await settled(page);
  expect([...chunks.keys()].filter((name) => name.startsWith('split_'))).toEqual(['split_restaurant.wasm']);

  await open(page, '/?a=gifts');
  await send(page, 'Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu');
  const suggestions = tool(page, 'suggest_gifts', 'output-available');
  await expect(suggestions.locator('.gift-card').first()).toBeVisible();
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
  expect(chunks.get('split_gifts.wasm')).toBe(200);
  // The shipping assistant's chunk is still not needed.
  expect(chunks.has('split_shipping.wasm')).toBe(false);
  await settled(page);
});

test('the bookings page list comes with the page, without any chunk, by navigation and by direct load', async ({ page }) => {
  // The server renders the list and the browser hydrates it from the main bundle: the
  // chunk with the chat's bookings parts (the restaurant assistant's) is not needed for it.
  const chunks = chunkRequests(page);
  await page.goto('/bookings');
  await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.bookings-empty')).toBeVisible();
  expect([...chunks.keys()]).toEqual([]);

  // Followed from the chat's link, the browser renders the list itself, still chunk-free.
  await page.goto('/');
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  await expect.poll(() => chunks.get('split_restaurant.wasm')).toBe(200);
  // The restaurant chunk's shared files may still be arriving.
  await page.waitForLoadState('networkidle');
  chunks.clear();
  await page.getByRole('link', { name: 'Đặt chỗ của tôi' }).click();
  await expect(page.locator('main.bookings-page .bookings-empty')).toBeVisible();
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
  expect([...chunks.keys()]).toEqual([]);
});

test('the consent form and the connected apps come from the connect chunk, fetched only when there is one to show', async ({ page }) => {
  const chunks = chunkRequests(page);
  // A person with no connected app: the bookings page needs no connect chunk.
  await page.goto('/bookings');
  await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.bookings-empty')).toBeVisible();
  expect(chunks.has('split_connect.wasm')).toBe(false);

  const redirectUri = 'http://127.0.0.1:9/callback';
  await page.route(`${redirectUri}**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' }),
  );
  const registered = await page.request.post('/oauth/register', {
    data: { client_name: 'Chunk client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
  });
  expect(registered.status()).toBe(201);
  const clientId: string = (await registered.json()).client_id;
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 's',
    scope: 'bookings',
    resource: `${new URL(page.url()).origin}/mcp/restaurant`,
  });
  await page.goto(`/oauth/authorize?${query}`);
  await expect(page.locator('.consent-question')).toHaveText('Cho phép Chunk client đặt bàn thay bạn?');
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
  expect(chunks.get('split_connect.wasm')).toBe(200);

  await page.getByRole('button', { name: 'Cho phép' }).click();
  await page.waitForURL((url) => url.href.startsWith(redirectUri));
  // The app swaps its code for tokens (RFC 7636's example verifier of that challenge).
  const token = await page.request.post('/oauth/token', {
    form: {
      grant_type: 'authorization_code',
      code: new URL(page.url()).searchParams.get('code') ?? '',
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    },
  });
  expect(token.status()).toBe(200);
  // Now there is a connected app: the bookings page shows it, built by the chunk.
  await page.goto('/bookings');
  await expect(page.locator('.connection-list .connection-name')).toHaveText('Chunk client');
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
});

test('a stored conversation with restaurant parts keeps the server card until the chunk is there: it never turns into a placeholder', async ({ page }) => {
  await open(page);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await expect(tool(page, 'getWeather', 'output-available').locator('article.weather')).toBeVisible();
  await settled(page);

  // The chunk comes late: a part that did not wait for it while hydrating would show its
  // placeholder in place of the server's card until then.
  let released = false;
  await page.route('**/pkg/split_restaurant.wasm', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    released = true;
    await route.continue();
  });
  const chunks = chunkRequests(page);
  let requested = 0;
  page.on('request', (request) => {
    if (request.url().endsWith('/pkg/split_restaurant.wasm')) requested += 1;
  });
  const response = await page.reload();
  // The page has the browser fetch the chunk alongside the main module (a preload the
  // chunk loader's fetch then uses: the file goes over the wire once).
  expect(response?.headers()['link'] ?? '').toContain('</pkg/split_restaurant.wasm>; rel=preload; as=fetch; crossorigin');
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  expect(released).toBe(true);
  expect(chunks.get('split_restaurant.wasm')).toBe(200);
  expect(requested).toBe(1);
  // At the moment the page is interactive, the card is the live one, not a placeholder.
  const now = await page.evaluate(() => ({
    cards: document.querySelectorAll('[data-tool="getWeather"] article.weather').length,
    skeletons: document.querySelectorAll('[data-tool="getWeather"] .skeleton').length,
  }));
  expect(now).toEqual({ cards: 1, skeletons: 0 });
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
});

test('a chunk that cannot be fetched shows a notice; the page keeps working and recovers on reload', async ({ page }) => {
  // The browser console says why the load failed; that is expected here.
  await page.route('**/pkg/split_gifts.wasm', (route) => route.abort('internetdisconnected'));
  await open(page, '/?a=gifts');
  await send(page, 'Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu');
  const part = tool(page, 'suggest_gifts', 'output-available');
  const notice = part.getByTestId('chunk-error');
  await expect(notice).toBeVisible();
  await expect(notice).toHaveAttribute('role', 'alert');
  await expect(notice).toContainText('Không tải được phần hiển thị này');
  await expect(part.locator('.gift-card')).toHaveCount(0);
  await settled(page);
  // The rest of the page still runs: the message box still drives the send button.
  const box = page.getByRole('textbox', { name: 'Tin nhắn' });
  await box.fill('Cảm ơn');
  await expect(page.getByRole('button', { name: 'Gửi' })).toBeEnabled();
  await box.fill('');

  // Once the network is back, "Tải lại trang" shows the stored suggestions.
  await page.unroute('**/pkg/split_gifts.wasm');
  await notice.getByRole('button', { name: 'Tải lại trang' }).click();
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  await expect(tool(page, 'suggest_gifts', 'output-available').locator('.gift-card').first()).toBeVisible();
  await expect(page.getByTestId('chunk-error')).toHaveCount(0);
});
