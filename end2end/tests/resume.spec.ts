import { test, expect, type Page } from '@playwright/test';
import { conversationId, open, send, settled, tool } from './helpers';

// Replies that outlive the page: a reload while the assistant writes picks the reply up
// where the stored copy ends, and "Dừng" stops it, also after such a reload.
//
// Tagged @slow: `cargo xtask test` runs these against a server whose offline model streams
// slowly (DATBAN_OFFLINE_TOKEN_DELAY_MS=40), so there is time to act mid-reply.

const TWO_CITIES = 'Thời tiết Hà Nội và Đà Lạt 2 ngày tới thế nào?';

/** The stored conversation's last message, as `GET /api/conversations/{id}` returns it. */
async function storedReply(page: Page, id: string) {
  const response = await page.request.get(`/api/conversations/${id}`);
  expect(response.status()).toBe(200);
  const body = await response.json();
  return body.messages[body.messages.length - 1];
}

function textOf(message: { parts: Array<Record<string, any>> }): string {
  return message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** Reloads while the reply is being written, and waits until the page follows it again. */
async function reloadMidReply(page: Page): Promise<string> {
  const id = conversationId(page);
  expect(id).not.toBe('');
  // Still being written when the page goes.
  expect((await storedReply(page, id)).status).toBeUndefined();
  await page.reload();
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('main.chat')).toHaveAttribute('data-streaming', 'true');
  return id;
}

test('@slow a reply reloaded mid-way completes on the page, every piece once', async ({ page }) => {
  await open(page);
  await send(page, TWO_CITIES);
  await expect(tool(page, 'getWeather').first()).toBeVisible();
  const id = await reloadMidReply(page);

  await expect(tool(page, 'getWeather', 'output-available')).toHaveCount(2, { timeout: 20_000 });
  await settled(page);
  const stored = await storedReply(page, id);
  expect(stored.status).toBe('completed');
  // The page shows exactly the stored reply: nothing applied twice, nothing missing.
  const reply = page.locator('li.message.assistant').last();
  await expect(reply).toHaveAttribute('data-message-id', stored.id);
  const shown = (await reply.locator('p.bubble').allTextContents()).join('');
  expect(shown).toBe(textOf(stored));
  expect(shown.length).toBeGreaterThan(0);
  await expect(tool(page, 'getWeather')).toHaveCount(2);
  await expect(page.locator('.composer-error')).toHaveCount(0);
});

test('@slow "Dừng" stops a reply picked up after a reload', async ({ page }) => {
  await open(page);
  await send(page, '#loop');
  await expect(tool(page, 'getWeather').first()).toBeVisible();
  const id = await reloadMidReply(page);

  await page.getByRole('button', { name: 'Dừng' }).click();
  await expect(page.locator('[data-status="stopped"]')).toBeVisible();
  await settled(page);
  expect((await storedReply(page, id)).status).toBe('stopped');
  await expect(page.getByRole('button', { name: 'Dừng' })).toHaveCount(0);
});

test('@slow "Dừng" during a reply shows it as stopped', async ({ page }) => {
  await open(page);
  await send(page, '#loop');
  await expect(tool(page, 'getWeather').first()).toBeVisible();
  await page.getByRole('button', { name: 'Dừng' }).click();
  await expect(page.locator('[data-status="stopped"]')).toBeVisible();
  await settled(page);
  const stored = await storedReply(page, conversationId(page));
  expect(stored.status).toBe('stopped');
  // Stopped before the step limit: the loop did not run its six steps.
  expect(
    stored.parts.filter((part: Record<string, any>) => part.type === 'step-start').length,
  ).toBeLessThan(6);
});
