import { test, expect, type Page } from '@playwright/test';
import { createHash } from 'node:crypto';

// An MCP client (ChatGPT, Claude) connecting through OAuth: it registers, sends the
// person to /oauth/authorize, the person answers on our consent page, and the browser
// goes back to the client's redirect URI with a code (or an error).

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const VERIFIER = 'e2e-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

async function register(page: Page, name: string): Promise<string> {
  const response = await page.request.post('/oauth/register', {
    data: {
      client_name: name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    },
  });
  expect(response.status()).toBe(201);
  return (await response.json()).client_id;
}

/** Opens the authorize URL; the browser lands on the hydrated consent page. */
async function openConsent(page: Page, clientId: string, scope: string) {
  const origin = new URL(page.url()).origin;
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'e2e-state',
    scope,
    resource: `${origin}/mcp/restaurant`,
  });
  await page.goto(`/oauth/authorize?${query}`);
  await expect(page).toHaveURL(/\/oauth\/consent\?request=oar_/);
  await expect(page.locator('main.consent-page')).toHaveAttribute('data-hydrated', 'true');
}

/** The client's redirect URI answers in the test, not on a socket. */
async function catchRedirect(page: Page) {
  await page.route(`${REDIRECT_URI}**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' }),
  );
}

test.beforeEach(async ({ page }) => {
  // A page of ours first: the browser gets its owner cookie, and relative URLs resolve.
  await page.goto('/bookings');
  await catchRedirect(page);
});

test('allowing sends a code back, the app can get a token, and it can be disconnected', async ({ page }) => {
  const clientId = await register(page, 'E2E client');
  await openConsent(page, clientId, 'bookings');

  await expect(page.locator('.consent-question')).toHaveText('Cho phép E2E client đặt bàn thay bạn?');
  await expect(page.locator('.consent-scopes li')).toHaveCount(1);
  await expect(page.locator('.consent-scopes li')).toContainText('đặt bàn');
  await expect(page.locator('.consent-note')).toContainText('127.0.0.1');

  await page.getByRole('button', { name: 'Cho phép' }).click();
  await page.waitForURL((url) => url.href.startsWith(REDIRECT_URI));
  const back = new URL(page.url());
  const code = back.searchParams.get('code');
  expect(code).toMatch(/^dac_/);
  expect(back.searchParams.get('state')).toBe('e2e-state');
  expect(back.searchParams.get('iss')).toBeTruthy();

  // The client's server swaps the code for tokens.
  const token = await page.request.post('/oauth/token', {
    form: {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: VERIFIER,
    },
  });
  expect(token.status()).toBe(200);
  const tokens = await token.json();
  expect(tokens.token_type).toBe('Bearer');
  expect(tokens.scope).toBe('bookings');

  // The person sees the app on the bookings page and disconnects it.
  await page.goto('/bookings');
  // Its buttons answer a click only once the page is hydrated.
  await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'true');
  const connection = page.locator('.connection');
  await expect(connection).toHaveCount(1);
  await expect(connection.locator('.connection-name')).toHaveText('E2E client');
  await connection.getByRole('button', { name: 'Ngắt kết nối' }).click();
  await expect(page.locator('.connections')).toHaveCount(0);
  const list = await (await page.request.get('/api/connections')).json();
  expect(list.connections).toEqual([]);
});

test('denying sends access_denied back and no code', async ({ page }) => {
  const clientId = await register(page, 'E2E client');
  await openConsent(page, clientId, '');
  await expect(page.locator('.consent-scopes li')).toHaveCount(2);
  await page.getByRole('button', { name: 'Từ chối' }).click();
  await page.waitForURL((url) => url.href.startsWith(REDIRECT_URI));
  const back = new URL(page.url());
  expect(back.searchParams.get('error')).toBe('access_denied');
  expect(back.searchParams.get('state')).toBe('e2e-state');
  expect(back.searchParams.get('code')).toBeNull();
});

test.describe('in a browser that prefers English', () => {
  test.use({ locale: 'en-US' });

  test('the consent page is in English', async ({ page }) => {
    const clientId = await register(page, 'E2E client');
    await openConsent(page, clientId, 'bookings');
    await expect(page.locator('.consent-question')).toHaveText('Allow E2E client to book tables for you?');
    await expect(page.getByRole('button', { name: 'Allow' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Deny' })).toBeVisible();
  });
});
