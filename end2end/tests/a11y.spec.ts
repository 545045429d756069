import { test, expect, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { open, send, settled, tool } from './helpers';

// Accessible to everyone: axe-core finds no serious or critical violation (WCAG 2.x A and
// AA, which includes AA contrast) on any page or in any state a tool part can be in, a
// booking can be made with the keyboard alone, and focus follows what the person must do.

async function violations(page: Page, where: string) {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = bad.map(
    (v) => `${where}: ${v.id} (${v.impact}) ${v.help}\n  ${v.nodes.map((n) => n.target.join(' ')).join('\n  ')}`,
  );
  expect(report, report.join('\n')).toEqual([]);
}

test('the chat and bookings pages have no serious violations', async ({ page }) => {
  await open(page);
  await violations(page, 'empty chat');
  await page.goto('/bookings');
  await expect(page.locator('main')).toHaveAttribute('data-hydrated', 'true');
  await violations(page, 'bookings');
  await page.goto('/no-such-page');
  await violations(page, 'not found');
});

test('every tool state a person meets has no serious violations', async ({ page }) => {
  await open(page);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await expect(tool(page, 'getWeather', 'output-available')).toBeVisible();
  await settled(page);
  await violations(page, 'weather card');

  await send(page, 'Tìm nhà hàng chả cá ở Hà Nội');
  await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
  await settled(page);
  await violations(page, 'restaurant list');

  await send(page, 'Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00');
  await expect(tool(page, 'createBooking', 'output-error')).toBeVisible();
  await settled(page);
  await violations(page, 'error notice');

  await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00');
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await settled(page);
  await violations(page, 'confirmation form');

  await send(page, 'Thời tiết Huế thế nào?');
  await expect(tool(page, 'getWeather', 'output-available').nth(1)).toBeVisible();
  await settled(page);
  await violations(page, 'moved on');

  await page.getByRole('button', { name: 'Vẫn đặt bàn này' }).click();
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  await expect(page.getByTestId('booking-receipt')).toBeVisible();
  await settled(page);
  await violations(page, 'receipt');
});

test('a booking can be made with the keyboard alone, and focus follows', async ({ page }) => {
  await open(page);
  // Tab to the message box, type, Enter: no mouse, no programmatic focus.
  const box = page.getByRole('textbox', { name: 'Tin nhắn' });
  for (let i = 0; i < 15 && !(await box.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect(box).toBeFocused();
  await page.keyboard.type('Tìm nhà hàng chả cá ở Hà Nội');
  await page.keyboard.press('Enter');
  await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
  await settled(page);
  await expect(box).toBeFocused();
  await page.keyboard.type('Đặt bàn ở Chả Cá Thăng Long cho 3 người tối mai lúc 19:00');
  await page.keyboard.press('Enter');

  // The confirmation appears and takes focus: what the person must do next.
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await settled(page);
  await expect
    .poll(() => form.evaluate((el) => el.contains(document.activeElement)))
    .toBe(true);
  const confirm = form.getByRole('button', { name: 'Xác nhận đặt bàn' });
  for (let i = 0; i < 10 && !(await confirm.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect(confirm).toBeFocused();
  // Focus is visible: the focused button draws an outline.
  const outline = await confirm.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe('none');
  await page.keyboard.press('Enter');

  // The result takes focus after the decision.
  const receipt = page.getByTestId('booking-receipt');
  await expect(receipt).toBeVisible();
  await expect(receipt).toContainText('3 người');
  await expect
    .poll(() => receipt.evaluate((el) => el.closest('.decision-result') === document.activeElement))
    .toBe(true);
});

test('the reply and status notices are announced through live regions', async ({ page }) => {
  await open(page);
  await expect(page.locator('[aria-live="polite"]').first()).toBeAttached();
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await settled(page);
  // The newest reply lives inside a polite live region, so screen readers read it out.
  const reply = page.locator('.message.assistant').last();
  const announced = await reply.evaluate((el) => !!el.closest('[aria-live="polite"], [role="log"]'));
  expect(announced).toBe(true);
  // A failure is announced as it appears.
  await send(page, 'Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00');
  await expect(tool(page, 'createBooking', 'output-error').locator('[role="alert"]')).toBeVisible();
});
