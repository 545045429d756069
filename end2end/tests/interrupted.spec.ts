import { test, expect } from '@playwright/test';
import { conversationId, open, send, settled, tool } from './helpers';

// A reply whose server dies mid-way: another server sharing the database closes it as
// interrupted once its heartbeat is older than the timeout, and a page following the
// reply there says so and offers to write it again.
//
// Tagged @slow: `cargo xtask test` starts, beside the slow pass's server, a second server
// on the same database (DATBAN_VICTIM_URL, its process DATBAN_VICTIM_PID) that this test
// kills with SIGKILL, as a crash or an OOM kill would.

const victimUrl = process.env.DATBAN_VICTIM_URL ?? '';
const victimPid = Number(process.env.DATBAN_VICTIM_PID ?? '0');

test('@slow a reply whose server was killed shows as interrupted on another server, with a retry', async ({
  page,
  context,
}) => {
  // Run as `cargo xtask test` runs it; without the second server this test cannot pass.
  expect(victimUrl, 'DATBAN_VICTIM_URL: the second server `cargo xtask test` starts').not.toBe('');
  expect(victimPid, 'DATBAN_VICTIM_PID: its process').toBeGreaterThan(0);
  // The reply is written by the server that will die.
  await open(page, `${victimUrl}/`);
  await send(page, '#loop');
  await expect(tool(page, 'getWeather').first()).toBeVisible();
  const id = conversationId(page);
  expect(id).not.toBe('');

  // The same person (the cookie is per host) follows it on the other server.
  const other = await context.newPage();
  await open(other, `/?c=${id}`);
  await expect(other.locator('main.chat')).toHaveAttribute('data-streaming', 'true');

  process.kill(victimPid, 'SIGKILL');
  const notice = other.locator('[data-status="interrupted"]');
  await expect(notice).toBeVisible({ timeout: 30_000 });
  await expect(notice).toContainText('gián đoạn');
  await settled(other);
  const stored = await other.request.get(`/api/conversations/${id}`);
  const body = await stored.json();
  expect(body.messages[body.messages.length - 1].status).toBe('interrupted');
  expect(body.running).toBeUndefined();

  // "Tạo lại" writes the reply again, on the living server.
  await other.getByRole('button', { name: 'Tạo lại' }).click();
  await expect(other.locator('main.chat')).toHaveAttribute('data-streaming', 'true');
  await other.getByRole('button', { name: 'Dừng' }).click();
  await expect(other.locator('[data-status="stopped"]')).toBeVisible();
  await expect(other.locator('[data-status="interrupted"]')).toHaveCount(0);
});
