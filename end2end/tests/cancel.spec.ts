import { test, expect } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// Cancelling a booking: only in the chat, only after the person confirms in a form.

async function bookingStatus(page: import('@playwright/test').Page, bookingId: string) {
  const response = await page.request.get('/api/bookings?all=1');
  expect(response.status()).toBe(200);
  const body = await response.json();
  return body.bookings.find((b: { bookingId: string }) => b.bookingId === bookingId)?.status;
}

test('a cancellation waits for the click, then shows a receipt and the list says đã huỷ', async ({ page }) => {
  await open(page);
  await send(page, 'Tìm nhà hàng chả cá ở Hà Nội');
  await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
  await settled(page);
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00');
  const bookingForm = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(bookingForm).toBeVisible();
  await bookingForm.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await settled(page);
  const bookingId = (await receipt.locator('.booking-id').textContent())?.trim() ?? '';
  expect(bookingId).toMatch(/^BK-[0-9A-F]{8}$/);

  await send(page, `Huỷ đặt chỗ ${bookingId}`);
  const form = page.getByRole('form', { name: 'Xác nhận huỷ đặt chỗ' });
  await expect(form).toBeVisible();
  await expect(tool(page, 'cancelBooking', 'approval-requested')).toBeVisible();
  await expect(form.locator('.cancel-booking-id')).toHaveText(bookingId);
  await expect(form.getByRole('button', { name: 'Giữ lại' })).toBeVisible();
  await settled(page);
  // Nothing is cancelled before the click.
  await expect(page.getByTestId('cancel-receipt')).toHaveCount(0);
  expect(await bookingStatus(page, bookingId)).not.toBe('cancelled');

  await form.getByRole('button', { name: 'Huỷ đặt chỗ', exact: true }).click();
  const cancelled = page.getByTestId('cancel-receipt');
  await expect(cancelled).toBeVisible();
  await expect(cancelled).toContainText(`Đã huỷ đặt chỗ ${bookingId}`);
  await settled(page);
  expect(await bookingStatus(page, bookingId)).toBe('cancelled');

  await page.getByRole('link', { name: 'Đặt chỗ của tôi' }).click();
  await expect(page).toHaveURL(/\/bookings$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Đặt chỗ của tôi');
  const row = page.locator(`.booking-row[data-booking-id="${bookingId}"]`);
  await expect(row).toBeVisible();
  await expect(row.locator('.status-badge')).toHaveText('đã huỷ');
  // A cancelled booking offers no way to cancel it again.
  await expect(row.locator('.booking-cancel-hint')).toHaveCount(0);
});

test('the bookings page loads in the browser and links back to the chat', async ({ page }) => {
  await page.goto('/bookings');
  await expect(page.locator('main.bookings-page')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Đặt chỗ của tôi');
  // A fresh owner has no bookings: the empty state, not an error.
  await expect(page.locator('.bookings-empty')).toBeVisible();
  await expect(page.locator('.bookings-error')).toHaveCount(0);
  await page.getByRole('link', { name: 'Về trò chuyện' }).click();
  await expect(page.locator('main.chat')).toBeVisible();
});

test('a cancellation left open is not done, and can still be made from the chat', async ({ page }) => {
  await open(page);
  // Named in a new conversation: the assistant searches and proposes the booking in one
  // reply (a person has a small burst of messages per minute; this test needs five).
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 18:00');
  const bookingForm = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await bookingForm.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await settled(page);
  const bookingId = (await receipt.locator('.booking-id').textContent())?.trim() ?? '';

  await send(page, `Huỷ đặt chỗ ${bookingId}`);
  await expect(page.getByRole('form', { name: 'Xác nhận huỷ đặt chỗ' })).toBeVisible();
  await settled(page);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await expect(tool(page, 'getWeather', 'output-available')).toBeVisible();
  await settled(page);
  const closed = tool(page, 'cancelBooking', 'output-error');
  await expect(closed).toContainText('bạn đã gửi tin nhắn khác');
  expect(await bookingStatus(page, bookingId)).not.toBe('cancelled');

  await closed.getByRole('button', { name: 'Vẫn huỷ đặt chỗ này' }).click();
  const form = page.getByRole('form', { name: 'Xác nhận huỷ đặt chỗ' });
  await expect(form).toBeVisible();
  await expect(form.locator('.cancel-booking-id')).toHaveText(bookingId);
  await form.getByRole('button', { name: 'Huỷ đặt chỗ', exact: true }).click();
  await expect(page.getByTestId('cancel-receipt')).toContainText(`Đã huỷ đặt chỗ ${bookingId}`);
  await settled(page);
  expect(await bookingStatus(page, bookingId)).toBe('cancelled');
});
