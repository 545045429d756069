import { test, expect } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// The shipping assistant with the offline model: a quote in DEMO, a made-up currency.

test('a local 2 kg quote shows 7.00 DEMO and says DEMO is not money', async ({ page }) => {
  await open(page, '/?a=shipping');
  await expect(page.getByRole('radio', { name: 'Báo giá giao hàng' })).toBeChecked();
  await send(page, 'Báo giá giao hàng nội thành 2 kg');
  const quote = tool(page, 'shipping_quote', 'output-available');
  await expect(quote).toBeVisible();
  await expect(quote.locator('.quote-amount')).toHaveText('7.00 DEMO');
  await expect(quote.locator('.quote-zone')).toHaveText('Nội thành');
  await expect(quote.locator('.quote-weight')).toHaveText('2 kg');
  await expect(quote.locator('.quote-not-money')).toContainText('không phải tiền thật');
  await settled(page);

  // After a reload the conversation still names its assistant, and offers no picker.
  await page.reload();
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.assistant-current')).toContainText('Báo giá giao hàng');
  await expect(page.getByRole('radio')).toHaveCount(0);
  await expect(tool(page, 'shipping_quote', 'output-available').locator('.quote-amount')).toHaveText('7.00 DEMO');
});

test('the picker chooses the assistant of a new conversation', async ({ page }) => {
  await open(page);
  // Restaurant unless the URL says otherwise.
  await expect(page.getByRole('radio', { name: 'Đặt bàn nhà hàng' })).toBeChecked();
  await page.getByRole('radio', { name: 'Báo giá giao hàng' }).check();
  const chat = page.waitForRequest((request) => request.url().endsWith('/api/chat'));
  await send(page, 'Báo giá giao hàng nội thành 2 kg');
  expect((await chat).postDataJSON()).toMatchObject({ assistant: 'shipping' });
  await expect(tool(page, 'shipping_quote', 'output-available')).toBeVisible();
  await settled(page);
});
