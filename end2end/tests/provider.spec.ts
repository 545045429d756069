import { test, expect } from '@playwright/test';
import { open, send, settled, tool } from './helpers';

// One booking with the server talking to a model over a real socket: `cargo xtask test`
// starts end2end/fake-openai.mjs, points a second server at it (DATBAN_PROVIDER=openai)
// and runs only the `@provider` tests, with FAKE_OPENAI_URL naming the fake. The offline
// pass leaves them out (`--grep-invert @provider`).

const fakeUrl = process.env.FAKE_OPENAI_URL;

type ChatMessage = {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
};
type ChatRequest = {
  model: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string } }>;
};
type IssuedCall = { id: string; name: string; arguments: string };

test.describe('@provider: a booking through an OpenAI-compatible provider', () => {
  test('the fake model proposes a booking, the person confirms, the receipt and the summary agree', async ({
    page,
    request,
  }) => {
    // Run by `cargo xtask test`, which starts fake-openai.mjs and names it here.
    expect(fakeUrl, 'FAKE_OPENAI_URL must name the fake provider').toBeTruthy();
    await open(page);
    await send(page, 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00');

    await expect(tool(page, 'createBooking', 'approval-requested')).toBeVisible();
    const form = page.getByRole('form', { name: 'Xác nhận đặt bàn' });
    await expect(form).toBeVisible();
    await expect(form.getByLabel('Số người')).toHaveValue('2');
    await form.getByRole('button', { name: 'Xác nhận đặt bàn' }).click();

    const receipt = page.getByTestId('booking-receipt');
    await expect(receipt).toBeVisible();
    await expect(receipt).toContainText('2 người');
    await expect(receipt).toContainText('Chả Cá Thăng Long');
    await expect(receipt).toContainText('19:00');
    await expect(receipt).toContainText(/BK-[0-9A-F]{8}/);
    await settled(page);
    const bookingId = (await receipt.textContent())?.match(/BK-[0-9A-F]{8}/)?.[0] ?? 'missing';
    await expect(page.locator('.message.assistant').last()).toContainText(bookingId);

    // What went over the socket: the fake's own record of the requests it answered.
    const requestsResponse = await request.get(`${fakeUrl}/requests`);
    expect(requestsResponse.ok()).toBeTruthy();
    const requests = (await requestsResponse.json()) as ChatRequest[];
    expect(requests.length).toBeGreaterThanOrEqual(2);

    const first = requests[0];
    expect(first.stream).toBe(true);
    expect(first.model).toBe('fake-model');
    expect(first.tools?.map((t) => t.function.name)).toContain('createBooking');
    const firstLast = first.messages[first.messages.length - 1];
    expect(firstLast.role).toBe('user');
    expect(String(firstLast.content)).toContain('Đặt bàn ở Chả Cá Thăng Long');

    const callsResponse = await request.get(`${fakeUrl}/calls`);
    expect(callsResponse.ok()).toBeTruthy();
    const issued = (await callsResponse.json()) as IssuedCall[];
    expect(issued.length).toBeGreaterThanOrEqual(1);
    const call = issued[issued.length - 1];
    expect(call.name).toBe('createBooking');
    expect(call.id).toMatch(/^call_fake_\d+$/);

    const last = requests[requests.length - 1];
    // The server replays the model's call as it was streamed, then the result under its id.
    const echoed = last.messages.find((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.id === call.id));
    expect(echoed, 'the assistant message carrying the fake call').toBeTruthy();
    const echoedCall = echoed!.tool_calls!.find((c) => c.id === call.id)!;
    expect(echoedCall.function.name).toBe('createBooking');
    expect(JSON.parse(echoedCall.function.arguments)).toEqual(JSON.parse(call.arguments));

    const result = last.messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
    expect(result, 'a tool message answering the fake call').toBeTruthy();
    expect(String(result!.content)).toContain('"ok":true');
    const content = JSON.parse(String(result!.content));
    expect(content.bookingId).toBe(bookingId);
    expect(content.partySize).toBe(2);
  });
});
