import { test, expect, type Page } from '@playwright/test';
import { open } from './helpers';
import { base, connect, evening, Provider, signIn, structured, type Any } from './mcp-helpers';

// The whole way a host such as ChatGPT uses datban: the official MCP client discovers the
// authorization server from the sign-in challenge, registers itself, sends the person to
// datban's consent page (a real Chromium page with the person's own cookie), redeems the
// code with PKCE, calls a personal tool, the person approves in the "widget" (here, the
// test calls decide_approval with the token from the result's _meta, as the widget does),
// and the booking is then on that person's "my bookings" page. Then refresh and revoke.

/** A person signs in from the challenge of an anonymous call, then their host proposes a
 * booking: what the widget would get. */
async function proposeBooking(page: Page, partySize: number, days: number) {
  await page.goto('/bookings');
  const anonymous = await connect('restaurant');
  const args = { restaurantId: 'hn-cha-ca-thang-long', partySize, startsAt: evening(days) };
  const refused = await anonymous.callTool({ name: 'createBooking', arguments: args });
  const challenge = (refused._meta as Any)['mcp/www_authenticate'][0] as string;
  await anonymous.close();
  const provider = new Provider();
  await signIn(page, provider, 'restaurant', challenge);
  const client = await connect('restaurant', provider);
  const proposed = await client.callTool({ name: 'createBooking', arguments: args });
  const waiting = structured(proposed);
  const token = (proposed._meta as Any)['datban/approvalToken'] as string;
  return { client, challenge, waiting, token };
}

test('sign in over OAuth, book through an approval exactly once, see it on the web page, refresh, revoke', async ({
  page,
}) => {
  test.setTimeout(60_000);
  // The person's browser: its owner cookie is who consents.
  await page.goto('/bookings');

  const anonymous = await connect('restaurant');
  const args = { restaurantId: 'hn-cha-ca-thang-long', partySize: 2, startsAt: evening(3) };
  const refused = await anonymous.callTool({ name: 'createBooking', arguments: args });
  expect(structured(refused).error.code).toBe('SIGN_IN_REQUIRED');
  const challenge = (refused._meta as Any)['mcp/www_authenticate'][0] as string;
  await anonymous.close();

  const provider = new Provider();
  await signIn(page, provider, 'restaurant', challenge);
  const client = await connect('restaurant', provider);

  // A write waits for the person: nothing is booked yet.
  const proposed = await client.callTool({ name: 'createBooking', arguments: args });
  const waiting = structured(proposed);
  expect(waiting).toMatchObject({ ok: true, status: 'approval_required', tool: 'createBooking' });
  expect(waiting.approvalUrl).toMatch(/\/\?c=conv_mcp[0-9a-f]{32}$/);
  const token = (proposed._meta as Any)['datban/approvalToken'] as string;
  expect(token).toMatch(/^[0-9a-f]{64}$/);
  // The model's view holds no token.
  expect(JSON.stringify(proposed.structuredContent)).not.toContain(token);
  const before = await page.request.get('/api/bookings');
  expect((await before.json()).bookings).toHaveLength(0);

  // The host repeats the call, keys in another order and the time written differently:
  // the same approval.
  const again = structured(
    await client.callTool({
      name: 'createBooking',
      arguments: {
        startsAt: args.startsAt.replace(':00+07:00', ':00.000+07:00'),
        partySize: 2,
        restaurantId: args.restaurantId,
      },
    }),
  );
  expect(again.approvalId).toBe(waiting.approvalId);

  // A forged token decides nothing.
  const forged = await client.callTool({
    name: 'decide_approval',
    arguments: { approvalId: waiting.approvalId, approvalToken: '0'.repeat(64), approved: true },
  });
  expect(structured(forged).error.code).toBe('NOT_FOUND');

  // 50 clicks at once: one booking.
  const decisions = await Promise.all(
    Array.from({ length: 50 }, () =>
      client.callTool({
        name: 'decide_approval',
        arguments: { approvalId: waiting.approvalId, approvalToken: token, approved: true },
      }),
    ),
  );
  const outcomes = decisions.map((d) => structured(d));
  const done = outcomes.filter((o) => o.status === 'done');
  expect(done.length).toBeGreaterThanOrEqual(1);
  // The others either raced the one carrying it out, or came after it and got its outcome.
  for (const other of outcomes.filter((o) => o.status !== 'done')) {
    expect(other.error?.code).toBe('DECISION_IN_PROGRESS');
    expect(other.error?.retryable).toBe(true);
  }
  const bookingId = done[0].output.bookingId as string;
  for (const d of done) expect(d.output.bookingId).toBe(bookingId);
  // Asked again later, the decision answers its stored outcome.
  const replay = structured(
    await client.callTool({
      name: 'decide_approval',
      arguments: { approvalId: waiting.approvalId, approvalToken: token, approved: false },
    }),
  );
  expect(replay).toMatchObject({ status: 'done' });
  expect(replay.output.bookingId).toBe(bookingId);

  // The person's own page lists it, and the model's listBookings too.
  const mine = await (await page.request.get('/api/bookings')).json();
  expect(mine.bookings.map((b: Any) => b.bookingId)).toEqual([bookingId]);
  await page.goto('/bookings');
  await expect(page.getByText(bookingId).first()).toBeVisible();
  const listed = structured(await client.callTool({ name: 'listBookings', arguments: {} }));
  expect(listed.output.bookings.map((b: Any) => b.bookingId)).toEqual([bookingId]);
  await client.close();

  // Refresh: a new access token, the old refresh token no longer works.
  const oldTokens = provider.saved!;
  const meta = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
  const refreshed = await fetch(meta.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: oldTokens.refresh_token,
      client_id: provider.info!.client_id,
    }),
  });
  expect(refreshed.status).toBe(200);
  const fresh = await refreshed.json();
  expect(fresh.access_token).not.toBe(oldTokens.access_token);
  provider.saved = fresh;
  const afterRefresh = await connect('restaurant', provider);
  expect(structured(await afterRefresh.callTool({ name: 'listBookings', arguments: {} })).ok).toBe(true);
  await afterRefresh.close();

  // Revoke: the token stops working at once (HTTP 401 with the challenge).
  const revoked = await fetch(meta.revocation_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: fresh.access_token, client_id: provider.info!.client_id }),
  });
  expect(revoked.status).toBe(200);
  const rejected = await fetch(`${base}/mcp/restaurant`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${fresh.access_token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(rejected.status).toBe(401);
  expect(rejected.headers.get('www-authenticate')).toContain('resource_metadata=');
});

test('a decline books nothing, and another person cannot decide or see the call', async ({ page, browser }) => {
  test.setTimeout(60_000);
  const { client, challenge, waiting, token } = await proposeBooking(page, 3, 4);

  // Someone else, signed in with their own account, holds the id and even the token.
  const otherContext = await browser.newContext();
  const otherPage = await otherContext.newPage();
  await otherPage.goto(`${base}/bookings`);
  const otherProvider = new Provider();
  await signIn(otherPage, otherProvider, 'restaurant', challenge);
  const other = await connect('restaurant', otherProvider);
  const stolen = await other.callTool({
    name: 'decide_approval',
    arguments: { approvalId: waiting.approvalId, approvalToken: token, approved: true },
  });
  expect(structured(stolen).error.code).toBe('NOT_FOUND');
  await other.close();
  await otherContext.close();

  const declined = structured(
    await client.callTool({
      name: 'decide_approval',
      arguments: { approvalId: waiting.approvalId, approvalToken: token, approved: false },
    }),
  );
  expect(declined).toMatchObject({ ok: true, status: 'declined', tool: 'createBooking' });
  const mine = await (await page.request.get('/api/bookings')).json();
  expect(mine.bookings).toHaveLength(0);
  await client.close();
});

test('a host without widgets: the person confirms on datban’s page, and the host learns the outcome', async ({
  page,
}) => {
  test.setTimeout(60_000);
  const { client, waiting, token } = await proposeBooking(page, 4, 5);

  // The link opens the same confirmation form the page shows for its own calls. The form the
  // server rendered only answers a click once the page is hydrated, so wait for that first.
  await open(page, waiting.approvalUrl);
  const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();
  await expect(page.locator('[data-tool="createBooking"][data-state="output-available"]')).toBeVisible({
    timeout: 20_000,
  });
  const mine = await (await page.request.get('/api/bookings')).json();
  expect(mine.bookings).toHaveLength(1);

  // The widget's late decision runs nothing again: it gets the outcome of the page's.
  const late = structured(
    await client.callTool({
      name: 'decide_approval',
      arguments: { approvalId: waiting.approvalId, approvalToken: token, approved: true },
    }),
  );
  expect(late).toMatchObject({ ok: true, status: 'done', tool: 'createBooking' });
  expect(late.output.bookingId).toBe(mine.bookings[0].bookingId);
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(1);
  await client.close();
});

test('every personal tool over MCP: a gift bought once by key, a booking cancelled on approval, bad arguments refused', async ({
  page,
}) => {
  test.setTimeout(90_000);
  await page.goto('/bookings');

  // GiftGenius: its own server, its own token (a restaurant token is for another server).
  const gifts0 = await connect('gifts');
  const refusedDraft = await gifts0.callTool({ name: 'prepare_checkout', arguments: { gift_id: 'x' } });
  expect(structured(refusedDraft).error.code).toBe('SIGN_IN_REQUIRED');
  const giftChallenge = (refusedDraft._meta as Any)['mcp/www_authenticate'][0] as string;
  expect(giftChallenge).toContain('/mcp/gifts');
  const ideas = structured(
    await gifts0.callTool({ name: 'suggest_gifts', arguments: { relationship_type: 'parent', interests: ['gardening'] } }),
  );
  const giftId = ideas.output.gifts[0].gift_id as string;
  await gifts0.close();
  const giftProvider = new Provider();
  await signIn(page, giftProvider, 'gifts', giftChallenge);
  const gifts = await connect('gifts', giftProvider);
  for (const [name, args] of [
    ['prepare_checkout', { gift_id: giftId, extra: 1 }],
    ['prepare_checkout', { gift_id: '  ' }],
    ['create_checkout_session', { draft_id: 'd' }],
    ['create_checkout_session', { draft_id: 'd', idempotency_key: 'bad key!' }],
  ] as Array<[string, Any]>) {
    const bad = await gifts.callTool({ name, arguments: args });
    expect(bad.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
    expect(structured(bad).error.code).toBe('VALIDATION_ERROR');
  }
  const draft = structured(await gifts.callTool({ name: 'prepare_checkout', arguments: { gift_id: giftId } }));
  expect(draft).toMatchObject({ ok: true, status: 'done' });
  const purchase = { draft_id: draft.output.draft_id, idempotency_key: `checkout-${draft.output.draft_id}` };
  const proposed = await gifts.callTool({ name: 'create_checkout_session', arguments: purchase });
  const waiting = structured(proposed);
  expect(waiting.status, JSON.stringify(waiting)).toBe('approval_required');
  // ChatGPT calls again with the same key: the same form, not a second purchase.
  const again = structured(await gifts.callTool({ name: 'create_checkout_session', arguments: purchase }));
  expect(again.approvalId).toBe(waiting.approvalId);
  const bought = structured(
    await gifts.callTool({
      name: 'decide_approval',
      arguments: {
        approvalId: waiting.approvalId,
        approvalToken: (proposed._meta as Any)['datban/approvalToken'],
        approved: true,
      },
    }),
  );
  expect(bought).toMatchObject({ ok: true, status: 'done', tool: 'create_checkout_session' });
  expect(bought.output.checkout_id).toBeTruthy();
  expect(bought.output.fictional).toBe(true);
  await gifts.close();

  // Restaurant: book, then cancel, each on the person's click.
  const r0 = await connect('restaurant');
  const args = { restaurantId: 'hn-cha-ca-thang-long', partySize: 2, startsAt: evening(6) };
  const challenge = (
    (await r0.callTool({ name: 'listBookings', arguments: {} }))._meta as Any
  )['mcp/www_authenticate'][0] as string;
  await r0.close();
  const provider = new Provider();
  await signIn(page, provider, 'restaurant', challenge);
  const client = await connect('restaurant', provider);
  const decide = async (result: Any, approved = true) =>
    structured(
      await client.callTool({
        name: 'decide_approval',
        arguments: {
          approvalId: result.structuredContent.approvalId,
          approvalToken: result._meta['datban/approvalToken'],
          approved,
        },
      }),
    );
  const booked = await decide(await client.callTool({ name: 'createBooking', arguments: args }));
  const bookingId = booked.output.bookingId as string;
  for (const [name, bad] of [
    ['createBooking', { ...args, partySize: 0 }],
    ['createBooking', { restaurantId: args.restaurantId, startsAt: args.startsAt }],
    ['cancelBooking', {}],
    ['listBookings', { includePastAndCancelled: 'yes' }],
  ] as Array<[string, Any]>) {
    const result = await client.callTool({ name, arguments: bad });
    expect(result.isError, `${name} ${JSON.stringify(bad)}`).toBe(true);
    expect(structured(result).error.code).toBe('VALIDATION_ERROR');
  }
  // Someone else's booking, or one made up, is not found (and nothing is asked).
  const unknown = await client.callTool({ name: 'cancelBooking', arguments: { bookingId: 'BK-00000000' } });
  expect(unknown.isError).toBe(true);
  expect(structured(unknown).error.code).toBe('NOT_FOUND');
  const cancelProposed = await client.callTool({ name: 'cancelBooking', arguments: { bookingId } });
  expect(structured(cancelProposed).status).toBe('approval_required');
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(1);
  const cancelled = await decide(cancelProposed);
  expect(cancelled).toMatchObject({ ok: true, status: 'done', tool: 'cancelBooking' });
  expect(cancelled.output.booking.status).toBe('cancelled');
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(0);
  await client.close();
});
