import { test, expect } from '@playwright/test';
import { open, send, settled, storedParts, tool } from './helpers';

// GiftGenius with the offline model: suggestions, the empty state, and a fictional checkout
// that happens only after the person confirms.

test('nothing fitting shows the reason the tool gave, and no gift card', async ({ page }) => {
  await open(page, '/?a=gifts');
  await expect(page.getByRole('radio', { name: 'GiftGenius — gợi ý quà' })).toBeChecked();
  // The first message creates the conversation with the chosen assistant.
  const chat = page.waitForRequest((request) => request.url().endsWith('/api/chat'));
  await send(page, 'Quà cho bạn thích lặn biển dưới 50k');
  expect((await chat).postDataJSON()).toMatchObject({ assistant: 'gifts' });

  const part = tool(page, 'suggest_gifts', 'output-available');
  await expect(part).toBeVisible();
  const reason = part.locator('.empty-reason');
  await expect(reason).toBeVisible();
  await expect(reason).not.toHaveText(/^\s*$/);
  await expect(part.locator('.gift-card')).toHaveCount(0);
  await settled(page);
  await expect(page.locator('.gift-card')).toHaveCount(0);

  // The text shown is the server's reason, not a stand-in.
  const stored = (await storedParts(page)).find(
    (p) => p.tool === 'suggest_gifts' && p.state === 'output-available',
  );
  expect(stored?.output.gifts).toEqual([]);
  const expected = String(stored?.output.no_results_reason ?? '').trim();
  expect(expected).not.toBe('');
  await expect(reason).toHaveText(expected);

  // The conversation is fixed to its assistant: the picker is gone, the label stays.
  await expect(page.getByRole('radio')).toHaveCount(0);
  await expect(page.locator('.assistant-current')).toContainText('GiftGenius — gợi ý quà');
});

test('gift cards, then a draft and a confirmation; the receipt exists only after the click', async ({ page }) => {
  await open(page, '/?a=gifts');
  await send(page, 'Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu');
  const suggestions = tool(page, 'suggest_gifts', 'output-available');
  await expect(suggestions).toBeVisible();
  const cards = suggestions.locator('.gift-card');
  await expect(cards.first()).toBeVisible();
  // Whole đồng, grouped by dots: "450.000 ₫".
  await expect(cards.first().locator('.gift-price')).toHaveText(/^\d{1,3}(\.\d{3})* ₫$/);
  const firstGift = (await cards.first().locator('.gift-name').textContent())?.trim() ?? '';
  expect(firstGift).not.toBe('');
  await settled(page);

  await send(page, 'Mua món đầu tiên');
  const draft = tool(page, 'prepare_checkout', 'output-available');
  await expect(draft).toBeVisible();
  await expect(draft.locator('.checkout-gift')).toHaveText(firstGift);
  await expect(draft).toContainText('Thanh toán giả lập — không trừ tiền thật');
  await expect(draft.locator('.checkout-total')).toHaveText(/^\d{1,3}(\.\d{3})* ₫$/);

  const form = page.getByRole('form', { name: 'Xác nhận thanh toán' });
  await expect(form).toBeVisible();
  await expect(tool(page, 'create_checkout_session', 'approval-requested')).toBeVisible();
  await settled(page);
  // The form approves or declines the draft as prepared: nothing in it can be edited.
  await expect(form.locator('input, select, textarea')).toHaveCount(0);
  await expect(form.locator('.checkout-gift')).toHaveText(firstGift);
  // Nothing bought yet.
  await expect(page.getByTestId('checkout-receipt')).toHaveCount(0);
  const before = await storedParts(page);
  expect(before.filter((p) => p.tool === 'create_checkout_session' && p.state === 'output-available')).toHaveLength(0);

  await form.getByRole('button', { name: 'Xác nhận', exact: true }).click();
  const receipt = page.getByTestId('checkout-receipt');
  await expect(receipt).toBeVisible();
  await expect(receipt.locator('.checkout-id')).toHaveText(/^CHK-\S+$/);
  await expect(receipt.locator('.payment-reference')).not.toHaveText(/^\s*$/);
  await expect(receipt).toContainText('giả lập');
  await expect(receipt.locator('.receipt-total')).toHaveText(
    (await draft.locator('.checkout-total').textContent()) ?? 'missing',
  );
  await settled(page);
  await expect(page.getByTestId('checkout-receipt')).toHaveCount(1);
});
