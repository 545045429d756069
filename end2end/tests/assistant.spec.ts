import { test, expect, type Page } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// Every scenario a person meets with the offline model and no API key.

async function searchThenAsk(page: Page, booking: string) {
  await open(page);
  await send(page, 'Tìm nhà hàng chả cá ở Hà Nội');
  await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
  await settled(page);
  await send(page, booking);
}

test('a weather question shows a weather card in Vietnamese', async ({ page }) => {
  await open(page);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  const card = tool(page, 'getWeather', 'output-available');
  await expect(card).toBeVisible();
  await expect(card).toContainText('Hà Nội');
  await expect(card).toContainText('°C');
  await settled(page);
  await expect(page.locator('.message.assistant').last()).toContainText('Hà Nội');
});

test('the incident: no party size means no receipt, an error notice and a question', async ({ page }) => {
  await searchThenAsk(page, 'Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00');
  const failed = tool(page, 'createBooking', 'output-error');
  await expect(failed).toBeVisible();
  await expect(failed).toContainText('Chưa đặt được bàn');
  await expect(failed).toContainText('Thiếu số người');
  await expect(failed).not.toContainText('partySize');
  await settled(page);
  await expect(page.locator('.message.assistant').last()).toContainText('mấy người');
  await expect(page.getByTestId('booking-receipt')).toHaveCount(0);
  await expect(page.getByRole('form', { name: 'Xác nhận đặt bàn' })).toHaveCount(0);
});

test('a booking confirmed with an edited party size shows a receipt with that size', async ({ page }) => {
  await searchThenAsk(page, 'Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  const size = form.getByLabel('Số người');
  await expect(size).toHaveValue('4');
  await size.fill('6');
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await expect(receipt).toContainText('6 người');
  await expect(receipt).toContainText('Chả Cá Thăng Long');
  await expect(receipt).toContainText(/BK-[0-9A-F]{8}/);
  await expect(receipt).toContainText('19:00');
  await settled(page);
  const bookingId = (await receipt.textContent())?.match(/BK-[0-9A-F]{8}/)?.[0] ?? 'missing';
  await expect(page.locator('.message.assistant').last()).toContainText(bookingId);
});

test('declining books nothing and says so', async ({ page }) => {
  await searchThenAsk(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: 'Từ chối' }).click();
  await expect(tool(page, 'createBooking', 'output-denied')).toBeVisible();
  await settled(page);
  await expect(page.getByTestId('booking-receipt')).toHaveCount(0);
});

test('a double click on confirm sends one decision and makes one booking', async ({ page }) => {
  const decisions: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/approvals')) decisions.push(request.method());
  });
  await searchThenAsk(page, 'Đặt bàn ở Chả Cá Thăng Long cho 3 người tối mai lúc 19:00');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).dblclick();
  await expect(page.getByTestId('booking-receipt')).toHaveCount(1);
  await settled(page);
  expect(decisions).toEqual(['POST']);
  // The server's record agrees: exactly one committed booking part.
  const url = new URL(page.url());
  const conversation = url.searchParams.get('c');
  expect(conversation).toBeTruthy();
  const response = await page.request.get(`/api/conversations/${conversation}`);
  const body = await response.json();
  const committed = body.messages
    .flatMap((m: { parts: Array<Record<string, unknown>> }) => m.parts)
    .filter((p: Record<string, unknown>) => p.tool === 'createBooking' && p.state === 'output-available');
  expect(committed).toHaveLength(1);
});

test('after a reload the pending confirmation is still there and works', async ({ page }) => {
  await searchThenAsk(page, 'Đặt bàn ở Chả Cá Thăng Long cho 5 người tối mai lúc 19:00');
  await expect(page.getByRole('form', { name: 'Xác nhận đặt bàn' })).toBeVisible();
  await settled(page);
  await page.reload();
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await expect(form.getByLabel('Số người')).toHaveValue('5');
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await expect(receipt).toContainText('5 người');
});

test('the step limit ends the reply with an honest notice', async ({ page }) => {
  await open(page);
  await send(page, '#loop');
  await expect(page.locator('[data-status="step-limit"]')).toBeVisible({ timeout: 20_000 });
});
