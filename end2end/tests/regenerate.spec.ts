import { test, expect, type Page } from '@playwright/test';
import { open, send, settled, storedParts } from './helpers';

// "Tạo lại" writes the newest reply again. People press it more than once, and a booking
// the replaced reply made must stay made once: shown again, never made a second time.

async function bookings(page: Page): Promise<Array<{ bookingId: string; status: string }>> {
  const response = await page.request.get('/api/bookings?all=1');
  expect(response.status()).toBe(200);
  return (await response.json()).bookings;
}

test('regenerating a booked reply keeps the one booking, however often it is pressed', async ({ page }) => {
  await open(page);
  // One message names the restaurant, so the booking is proposed in the first reply (a
  // person has a burst of five messages and approvals; this test uses five).
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await settled(page);
  const bookingId = (await receipt.locator('.booking-id').textContent())?.trim() ?? '';
  expect(bookingId).toMatch(/^BK-[0-9A-F]{8}$/);

  const regenerate = page.getByRole('button', { name: 'Tạo lại', exact: true });
  for (let round = 1; round <= 3; round += 1) {
    await expect(regenerate).toBeEnabled();
    await regenerate.click();
    await settled(page);
    // The reply is replaced, not added to: one person's message, one reply.
    await expect(page.locator('.message-list > li')).toHaveCount(2);
    await expect(page.getByTestId('booking-receipt')).toHaveCount(1);
    await expect(page.getByTestId('booking-receipt').locator('.booking-id')).toHaveText(bookingId);
    await expect(page.getByRole('form', { name: 'Xác nhận đặt bàn' })).toHaveCount(0);
    expect((await bookings(page)).map((b) => b.bookingId), `round ${round}`).toEqual([bookingId]);
  }

  // What the page shows is what is stored, and a reload shows the same.
  const parts = await storedParts(page);
  const booked = parts.filter((p) => p.tool === 'createBooking');
  expect(booked).toHaveLength(1);
  expect(booked[0].state).toBe('output-available');
  expect(booked[0].output.bookingId).toBe(bookingId);
  await page.reload();
  await expect(page.getByTestId('booking-receipt').locator('.booking-id')).toHaveText(bookingId);
  await expect(regenerate).toBeVisible();
});

test('regenerating a reply that asks for a confirmation asks again, and nothing is booked meanwhile', async ({ page }) => {
  await open(page);
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 20:00');
  await expect(page.getByRole('form', { name: 'Xác nhận đặt bàn' })).toBeVisible();
  await settled(page);
  await page.getByRole('button', { name: 'Tạo lại', exact: true }).click();
  await settled(page);
  await expect(page.locator('.message-list > li')).toHaveCount(2);
  // One form, the new reply's: the replaced one's confirmation closed with it.
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toHaveCount(1);
  expect(await bookings(page)).toEqual([]);
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  await expect(page.getByTestId('booking-receipt')).toBeVisible();
  await settled(page);
  expect(await bookings(page)).toHaveLength(1);
});

test.describe('in English', () => {
  test.use({ locale: 'en-US' });

  test('the English page calls it Regenerate', async ({ page }) => {
    await open(page);
    await page.getByRole('textbox', { name: 'Message' }).fill('What is the weather in Hanoi today?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.locator('[data-tool="getWeather"][data-state="output-available"]')).toBeVisible();
    await settled(page);
    await expect(page.getByRole('button', { name: 'Regenerate', exact: true })).toBeVisible();
  });
});
