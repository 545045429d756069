import { test, expect, type Page } from '@playwright/test';
import { conversationId, open, send, settled, tool } from './helpers';

// Pages with their data on first paint: the server renders `/bookings` with the owner's
// bookings and `/?c=<id>` with the stored messages, rather than a loading notice that
// waits for the WebAssembly.

/** Books a table through the chat; returns the booking id and the conversation id. */
async function book(page: Page): Promise<{ bookingId: string; conversation: string }> {
  await open(page);
  await send(page, 'Tìm nhà hàng chả cá ở Hà Nội');
  await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
  await settled(page);
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 3 người tối mai lúc 19:00');
  const form = page.locator('form.booking-form');
  await expect(form).toBeVisible();
  await form.locator('button[type="submit"]').click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await settled(page);
  const bookingId = (await receipt.locator('.booking-id').textContent())?.trim() ?? '';
  expect(bookingId).toMatch(/^BK-[0-9A-F]{8}$/);
  return { bookingId, conversation: conversationId(page) };
}

/** Collects what the browser console reports as errors (hydration mismatches included). */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

test('the server renders /bookings with the booking, and the page hydrates', async ({ page }) => {
  const { bookingId } = await book(page);

  // The raw HTML, as the server sends it to this browser (same owner cookie).
  const response = await page.request.get('/bookings');
  expect(response.status()).toBe(200);
  const html = await response.text();
  expect(html).toContain(`data-booking-id="${bookingId}"`);
  expect(html).toContain('Chả Cá Thăng Long');
  expect(html).toContain('3 người');
  expect(html).not.toContain('Đang tải danh sách đặt chỗ');

  // Another browser has its own bookings: none of this one's.
  const stranger = await page.context().browser()!.newContext({ baseURL: test.info().project.use.baseURL });
  const theirs = await stranger.request.get('/bookings');
  expect(await theirs.text()).not.toContain(bookingId);
  await stranger.close();

  const errors = consoleErrors(page);
  await page.goto('/bookings');
  await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'true');
  const row = page.locator(`.booking-row[data-booking-id="${bookingId}"]`);
  await expect(row).toHaveCount(1);
  await expect(row.locator('.status-badge')).toHaveText('đã xác nhận');
  // Hydrated, not rebuilt beside the server's copy: the link in the row is live.
  await row.getByRole('link', { name: 'Huỷ trong trò chuyện' }).click();
  await expect(page).toHaveURL(/\/\?a=restaurant$/);
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  expect(errors).toEqual([]);
});

test('the server renders a stored conversation with its messages, and it works once hydrated', async ({ page }) => {
  const { bookingId, conversation } = await book(page);
  expect(conversation).not.toBe('');

  const response = await page.request.get(`/?c=${conversation}`);
  expect(response.status()).toBe(200);
  const html = await response.text();
  expect(html).toContain('Tìm nhà hàng chả cá ở Hà Nội');
  expect(html).toContain('Đặt bàn ở Chả Cá Thăng Long cho 3 người tối mai lúc 19:00');
  expect(html).toContain(bookingId);
  expect(html).toContain('data-testid="booking-receipt"');
  expect(html).not.toContain('Đang tải cuộc trò chuyện');

  const errors = consoleErrors(page);
  await page.goto(`/?c=${conversation}`);
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  // Each message once: the browser's copy replaced the server's.
  await expect(page.locator('.message.user')).toHaveCount(2);
  await expect(page.getByTestId('booking-receipt')).toHaveCount(1);
  await expect(page.getByTestId('booking-receipt')).toContainText(bookingId);
  await expect(page.locator('.assistant-current')).toContainText('Đặt bàn nhà hàng');
  // And the conversation goes on from there.
  await send(page, 'Đặt chỗ của tôi');
  await expect(tool(page, 'listBookings', 'output-available')).toBeVisible();
  await settled(page);
  await expect(page.locator('.message.user')).toHaveCount(3);
  expect(errors).toEqual([]);
});

test('a conversation that is not there renders the new chat with a notice', async ({ page }) => {
  const response = await page.request.get('/?c=conv_does_not_exist');
  expect(response.status()).toBe(200);
  expect(await response.text()).toContain('Không tải được cuộc trò chuyện');
  await page.goto('/?c=conv_does_not_exist');
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.composer-error')).toContainText('Không tải được cuộc trò chuyện');
  // Not ours: the address no longer names it, and the picker offers a new conversation.
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('.assistant-picker')).toBeVisible();
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the bookings list is readable', async ({ page, context, browser }) => {
    // The booking is made in a browser with JavaScript, as the same person (its cookies).
    // (Playwright applies this block's options to new contexts too, so say it again.)
    const withScript = await browser.newContext({
      baseURL: test.info().project.use.baseURL,
      locale: 'vi-VN',
      javaScriptEnabled: true,
    });
    const chat = await withScript.newPage();
    const { bookingId } = await book(chat);
    await context.addCookies(await withScript.cookies());
    await withScript.close();

    await page.goto('/bookings');
    const row = page.locator(`.booking-row[data-booking-id="${bookingId}"]`);
    await expect(row).toBeVisible();
    await expect(row.locator('.booking-row-restaurant')).toHaveText('Chả Cá Thăng Long');
    await expect(row.locator('.booking-row-meta')).toContainText('19:00');
    await expect(row.locator('.booking-row-meta')).toContainText('3 người');
    await expect(row.locator('.status-badge')).toHaveText('đã xác nhận');
    await expect(page.getByText('Đang tải danh sách đặt chỗ')).toHaveCount(0);
    // Never hydrated, as there is no script to do it.
    await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'false');
  });
});
