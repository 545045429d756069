import { test, expect, type Route } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// Failed calls are shown by the kind of failure. The offline model cannot make a service
// go down, so the first reply here is a stream written by the test (after the real server
// created the conversation); the retry then goes to the real server.

const failures = [
  { id: 'call_down', code: 'UPSTREAM_UNAVAILABLE', retryable: true },
  { id: 'call_busy', code: 'IDEMPOTENCY_KEY_IN_USE', retryable: true },
  { id: 'call_reused', code: 'IDEMPOTENCY_KEY_REUSED', retryable: false },
  { id: 'call_cut', code: 'INTERRUPTED', retryable: false },
  { id: 'call_bug', code: 'EXECUTION_FAILED', retryable: false },
];

function fakeStream(conversationId: string): string {
  const events: unknown[] = [
    { type: 'start', messageId: 'msg-fake', messageMetadata: { conversationId } },
    { type: 'start-step' },
  ];
  for (const { id, code, retryable } of failures) {
    events.push(
      { type: 'tool-input-start', toolCallId: id, toolName: 'getWeather' },
      { type: 'tool-input-available', toolCallId: id, toolName: 'getWeather', input: { city: 'Hà Nội', days: 1 } },
      { type: 'tool-output-error', toolCallId: id, errorText: code, error: { code, message: `Lỗi ${code}`, retryable } },
    );
  }
  events.push({ type: 'finish-step' }, { type: 'finish', messageMetadata: { status: 'completed' } });
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n';
}

test('each kind of failure has its notice, and "Thử lại" sends the last message again', async ({ page }) => {
  const posted: Array<Record<string, unknown>> = [];
  let faked = false;
  await page.route('**/api/chat', async (route: Route) => {
    posted.push(route.request().postDataJSON());
    if (faked) return route.continue();
    faked = true;
    // Let the server create the conversation, then answer with failures of every kind.
    const real = await route.fetch();
    const id = (await real.text()).match(/"conversationId":"([^"]+)"/)?.[1] ?? 'missing';
    await route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
      body: fakeStream(id),
    });
  });

  await open(page);
  await send(page, 'Thời tiết Hà Nội hôm nay thế nào?');
  await settled(page);
  const notice = (id: string) => page.locator(`[data-call-id="${id}"] .notice`);

  const down = notice('call_down');
  await expect(down).toHaveAttribute('data-error-code', 'UPSTREAM_UNAVAILABLE');
  await expect(down).toContainText('Dịch vụ tạm thời không phản hồi');
  await expect(down.locator('.retry-button')).toHaveText('Thử lại');

  await expect(notice('call_busy')).toHaveAttribute('data-error-code', 'IDEMPOTENCY_KEY_IN_USE');
  await expect(notice('call_busy').locator('.retry-button')).toBeVisible();
  await expect(notice('call_reused')).toHaveAttribute('data-error-code', 'IDEMPOTENCY_KEY_REUSED');
  await expect(notice('call_reused').locator('.retry-button')).toHaveCount(0);
  await expect(notice('call_cut')).toHaveClass(/notice-not-run/);
  await expect(notice('call_cut').locator('.retry-button')).toHaveCount(0);
  await expect(notice('call_bug')).toHaveClass(/notice-error/);
  await expect(notice('call_bug')).toHaveAttribute('data-error-code', 'EXECUTION_FAILED');
  await expect(notice('call_bug').locator('.retry-button')).toHaveCount(0);

  await down.locator('.retry-button').click();
  await expect(tool(page, 'getWeather', 'output-available')).toBeVisible();
  await settled(page);
  // The same text, in the same conversation, by the chat form's path.
  expect(posted).toHaveLength(2);
  expect(posted[1].text).toBe(posted[0].text);
  expect(posted[1].conversationId).toBeTruthy();
  await expect(page.locator('.message.user')).toHaveCount(2);
  // Only the newest reply can be retried: the old notices lose their button.
  await expect(page.locator('.retry-button')).toHaveCount(0);
});

test('invalid arguments ask for a fix, and nothing is retried', async ({ page }) => {
  await open(page);
  await send(page, '#bad-json');
  const failed = tool(page, 'createBooking', 'output-error');
  await expect(failed).toBeVisible();
  const notice = failed.locator('.notice');
  await expect(notice).toHaveClass(/notice-validation/);
  await expect(notice).toHaveAttribute('data-error-code', 'VALIDATION_ERROR');
  await expect(notice).toContainText('Cần sửa thông tin');
  await expect(notice.locator('.retry-button')).toHaveCount(0);
  await settled(page);
});
