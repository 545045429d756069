import { expect, type Page, type Locator } from '@playwright/test';

// What every scenario does: open the chat, send a message, wait for the reply to finish,
// find a tool part by tool and state.

export async function open(page: Page, path = '/') {
  await page.goto(path);
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
}

export async function send(page: Page, text: string) {
  const box = page.getByRole('textbox', { name: 'Tin nhắn' });
  await box.fill(text);
  await page.getByRole('button', { name: 'Gửi' }).click();
}

/** Waits until the assistant has finished its reply. */
export async function settled(page: Page) {
  await expect(page.locator('[data-streaming="true"]')).toHaveCount(0, { timeout: 20_000 });
}

export function tool(page: Page, name: string, state?: string): Locator {
  const selector = state ? `[data-tool="${name}"][data-state="${state}"]` : `[data-tool="${name}"]`;
  return page.locator(selector);
}

/** The conversation id the page's URL carries (`?c=`), once the server created one. */
export function conversationId(page: Page): string {
  return new URL(page.url()).searchParams.get('c') ?? '';
}

/** Every part of the stored conversation, as `GET /api/conversations/{id}` returns them. */
export async function storedParts(page: Page): Promise<Array<Record<string, any>>> {
  const response = await page.request.get(`/api/conversations/${conversationId(page)}`);
  expect(response.status()).toBe(200);
  const body = await response.json();
  return body.messages.flatMap((m: { parts: Array<Record<string, any>> }) => m.parts);
}
