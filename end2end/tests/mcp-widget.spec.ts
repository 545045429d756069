import { test, expect, type Page, type FrameLocator, type TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

// The MCP Apps / ChatGPT Apps widget (server/src/mcp/widget.html) in real Chromium, without the
// datban server: a fixture page plays the host (tests/fixtures/widget-host.html) and loads the
// widget, read from disk, into a sandboxed srcdoc iframe under the hosts' default CSP. Results
// come from tests/fixtures/widget-samples.json (the structuredContent contract, v = 1).

const WIDGET = fs.readFileSync(path.join(__dirname, '../../server/src/mcp/widget.html'), 'utf8');
const HOST = fs.readFileSync(path.join(__dirname, 'fixtures/widget-host.html'), 'utf8');
const SAMPLES: Record<string, any> = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'fixtures/widget-samples.json'), 'utf8'),
);
const sample = (name: string) => structuredClone(SAMPLES[name]);

// No server and no shared state: each test is a page of its own, so the file's sixty tests
// may spread over every Playwright worker instead of queueing on one.
test.describe.configure({ mode: 'parallel' });

type Lang = 'vi' | 'en';
const LOCALE: Record<Lang, string> = { vi: 'vi-VN', en: 'en-US' };

interface HostOptions {
  locale?: string;
  theme?: 'light' | 'dark';
  toolInput?: Record<string, unknown>;
  toolResult?: unknown;
  replies?: Record<string, unknown[]>;
  delayMs?: number;
  prelude?: string;
  openLinks?: boolean;
}

/** Every network request the page makes: the widget must make none. */
const requests = new WeakMap<Page, string[]>();

test.beforeEach(async ({ page }) => {
  const seen: string[] = [];
  requests.set(page, seen);
  page.on('request', (request) => seen.push(request.url()));
});

test.afterEach(async ({ page }) => {
  const problems = await page.evaluate(() => (window as any).host?.problems ?? []).catch(() => []);
  expect(problems, 'CSP violations or script errors inside the widget').toEqual([]);
  expect(requests.get(page) ?? [], 'network requests').toEqual([]);
});

async function startHost(page: Page, options: HostOptions): Promise<FrameLocator> {
  await page.setContent(HOST);
  await page.evaluate((cfg) => (window as any).host.start(cfg), { html: WIDGET, ...options });
  return page.frameLocator('#widget');
}

/** The widget through the MCP Apps bridge, showing `result`. */
async function bridge(page: Page, result: unknown, lang: Lang = 'vi', extra: HostOptions = {}) {
  const sc = (result as any)?.structuredContent;
  const frame = await startHost(page, { locale: LOCALE[lang], theme: 'light', toolInput: sc?.input, toolResult: result, ...extra });
  await expect(frame.getByTestId('widget')).not.toHaveAttribute('data-state', 'loading');
  return frame;
}

const hostState = (page: Page) =>
  page.evaluate(() => {
    const h = (window as any).host;
    return { calls: h.calls, log: h.log, sizes: h.sizes, initParams: h.initParams, initializedAt: h.initializedAt, openaiCalls: h.openaiCalls, widgetStates: h.widgetStates };
  });

async function shot(page: Page, testInfo: TestInfo, name: string) {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

/** The text shown in the widget, for "never shows X" checks. */
const widgetText = (frame: FrameLocator) => frame.locator('body').innerText();

// ---------------------------------------------------------------------------------------------
// Cards, in both languages.

interface CardCase {
  sample: string;
  testId: string;
  state: string;
  vi: (string | RegExp)[];
  en: (string | RegExp)[];
}

const CARDS: CardCase[] = [
  {
    sample: 'weather', testId: 'card-weather', state: 'done',
    // The sample names its days (output.asked): the title says they are the weekend.
    vi: ['Thời tiết Hà Nội · cuối tuần (thứ Bảy 26/12 – Chủ Nhật 27/12)', '26/12', '27/12', 'Có mây', '17–23 °C', 'Mưa 20%', 'Mưa 80%'],
    en: ['Weather in Hà Nội · weekend (Sat 26 Dec – Sun 27 Dec)', 'Sat 26 Dec', 'Sun 27 Dec', 'Partly cloudy', '17–23 °C', 'Rain 20%', 'Rain 80%'],
  },
  {
    sample: 'restaurants', testId: 'card-restaurants', state: 'done',
    vi: ['2 nhà hàng ở Hà Nội', 'Bún Chả Hương Liên', 'Giờ mở cửa: 08:00–20:30', 'Giờ còn trống:', '18:00', '19:30', 'Không còn giờ trống vào ngày này.'],
    en: ['2 restaurants in Hà Nội', 'Bún Chả Hương Liên', 'Opening hours: 08:00–20:30', 'Free times:', '18:00', '19:30', 'No free times left on that day.'],
  },
  {
    sample: 'bookings', testId: 'card-bookings', state: 'done',
    vi: ['2 đặt chỗ', 'BK-1A2B3C4D', 'đã xác nhận', 'đã huỷ', '20:30, thứ Năm, 24/12/2026 · 6 người', '08:05, Chủ Nhật, 20/12/2026 · 2 người'],
    en: ['2 bookings', 'BK-1A2B3C4D', 'confirmed', 'cancelled', '20:30, Thu 24 Dec 2026 · 6 people', '08:05, Sun 20 Dec 2026 · 2 people'],
  },
  {
    sample: 'bookingReceipt', testId: 'receipt-booking', state: 'done',
    vi: ['Đã xác nhận', 'Mã đặt bàn', 'BK-1A2B3C4D', 'Bún Chả Hương Liên', '20:30, thứ Năm, 24/12/2026', '6 người', 'Nhà hàng đã giữ bàn cho bạn.'],
    en: ['Confirmed', 'Booking reference', 'BK-1A2B3C4D', 'Bún Chả Hương Liên', '20:30, Thu 24 Dec 2026', '6 people', 'The restaurant is holding a table for you.'],
  },
  {
    sample: 'bookingWaitlisted', testId: 'receipt-booking', state: 'done',
    vi: ['Trong danh sách chờ', 'Mã tham chiếu', 'BK-9Z8Y7X6W', 'Bạn đang trong danh sách chờ'],
    en: ['On the waiting list', 'Reference', 'BK-9Z8Y7X6W', 'You are on the waiting list'],
  },
  {
    sample: 'cancelReceipt', testId: 'receipt-cancel', state: 'done',
    vi: ['Đã huỷ', 'Đã huỷ đặt chỗ BK-1A2B3C4D', 'Nhà hàng không còn giữ bàn cho bạn.'],
    en: ['Cancelled', 'Booking BK-1A2B3C4D is cancelled', 'The restaurant is no longer holding a table for you.'],
  },
  {
    sample: 'gifts', testId: 'card-gifts', state: 'done',
    vi: ['2 gợi ý quà · bố mẹ · làm vườn · dưới 1.000.000 ₫', 'Bộ dụng cụ làm vườn', '450.000 ₫', '1.250.000 ₫', 'Hợp với:'],
    en: ['2 gift ideas · parent · làm vườn · under 1.000.000 ₫', 'Bộ dụng cụ làm vườn', '450.000 ₫', '1.250.000 ₫', 'Matches:'],
  },
  {
    sample: 'draft', testId: 'card-checkout-draft', state: 'done',
    vi: ['Bản nháp thanh toán', 'Bộ dụng cụ làm vườn', 'Miễn phí', '450.000 ₫', 'Thanh toán giả lập — không trừ tiền thật', 'Chưa mua gì'],
    en: ['Checkout draft', 'Bộ dụng cụ làm vườn', 'Free', '450.000 ₫', 'Simulated payment — no real money is charged', 'Nothing is bought yet'],
  },
  {
    sample: 'checkoutReceipt', testId: 'receipt-checkout', state: 'done',
    vi: ['Đã thanh toán (giả lập)', 'Mã thanh toán', 'CO-4D5E6F', '1.250.000 ₫', 'FAKE-PAY-0001', 'không có tiền thật nào bị trừ'],
    en: ['Paid (simulated)', 'Checkout reference', 'CO-4D5E6F', '1.250.000 ₫', 'FAKE-PAY-0001', 'no real money was charged'],
  },
  {
    sample: 'shipping', testId: 'card-shipping', state: 'done',
    vi: ['Báo giá giao hàng', 'Nội thành', '2.3 kg', '7.00 DEMO', 'không phải tiền thật'],
    en: ['Shipping quote', 'Local (same city)', '2.3 kg', '7.00 DEMO', 'not real money'],
  },
  {
    sample: 'bookingDeclined', testId: 'declined-notice', state: 'declined',
    vi: ['Bạn đã từ chối — chưa đặt bàn nào.'], en: ['You declined — no table was booked.'],
  },
  {
    sample: 'cancelDeclined', testId: 'declined-notice', state: 'declined',
    vi: ['Bạn đã giữ lại đặt chỗ BK-1A2B3C4D — không có gì bị huỷ.'], en: ['You kept booking BK-1A2B3C4D — nothing was cancelled.'],
  },
  {
    sample: 'checkoutDeclined', testId: 'declined-notice', state: 'declined',
    vi: ['Bạn đã huỷ — chưa mua gì.'], en: ['You cancelled — nothing was bought.'],
  },
];

for (const card of CARDS) {
  for (const lang of ['vi', 'en'] as const) {
    test(`${card.sample} renders as ${card.testId} in ${lang}`, async ({ page }, testInfo) => {
      const frame = await bridge(page, sample(card.sample), lang);
      const root = frame.getByTestId('widget');
      await expect(root).toHaveAttribute('data-state', card.state);
      await expect(root).toHaveAttribute('data-lang', lang);
      const node = frame.getByTestId(card.testId);
      await expect(node).toBeVisible();
      for (const text of card[lang]) await expect(node).toContainText(text);
      // The other language's texts are not shown (the shared ones aside).
      const other = card[lang === 'vi' ? 'en' : 'vi'].filter((x) => typeof x === 'string' && !card[lang].includes(x)) as string[];
      const shown = await widgetText(frame);
      for (const text of other) expect(shown, `"${text}" of the other language`).not.toContain(text);
      // Nothing that is not a receipt looks like one.
      if (!card.testId.startsWith('receipt-')) await expect(frame.locator('[data-testid^="receipt-"]')).toHaveCount(0);
      await shot(page, testInfo, `${card.sample}-${lang}`);
    });
  }
}

test('restaurant data is shown as text, never as markup', async ({ page }) => {
  const frame = await bridge(page, sample('restaurants'), 'vi');
  await expect(frame.getByTestId('card-restaurants')).toContainText('<img src=x onerror=');
  await expect(frame.locator('img')).toHaveCount(0);
  // A review is the customer's data: not shown, and never acted on.
  await expect(frame.getByTestId('card-restaurants')).not.toContainText('Ignore previous instructions');
  expect((await hostState(page)).calls).toEqual([]);
  await expect(frame.getByTestId('restaurant').first()).toHaveAttribute('data-restaurant-id', 'hn-bun-cha-01');
  await expect(frame.getByTestId('slot').first()).toHaveAttribute('title', 'Còn 6 chỗ');
});

// ---------------------------------------------------------------------------------------------
// Empty states: the server's (Vietnamese) reason in Vietnamese, the widget's own words in English.

const EMPTY = [
  { sample: 'restaurantsEmpty', vi: 'Không có nhà hàng hải sản nào ở Huế.', en: 'No matching restaurants in Huế.', help: ['Thử đổi ngày, món ăn hoặc số người', 'Try another date, cuisine or party size'] },
  { sample: 'bookingsEmpty', vi: 'Bạn chưa có đặt bàn nào sắp tới.', en: 'You have no bookings.', help: ['Đặt bàn trong trò chuyện với trợ lý nhà hàng.', 'Book a table by chatting with the restaurant assistant.'] },
  { sample: 'giftsEmpty', vi: 'Không có món quà nào cho “lặn biển” với giá tối đa 50.000 ₫.', en: 'No gift in our catalogue matches.', help: ['Thử nới ngân sách', 'Try a wider budget'] },
  { sample: 'weatherEmpty', vi: 'Không có dữ liệu dự báo.', en: 'No forecast data.', help: [] },
];

for (const empty of EMPTY) {
  for (const lang of ['vi', 'en'] as const) {
    test(`${empty.sample} shows a friendly empty state in ${lang}`, async ({ page }, testInfo) => {
      const frame = await bridge(page, sample(empty.sample), lang);
      await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'done');
      const state = frame.getByTestId('empty-state');
      await expect(state).toBeVisible();
      await expect(state).toHaveAttribute('role', 'status');
      await expect(state).toContainText(empty[lang]);
      const help = empty.help[lang === 'vi' ? 0 : 1];
      if (help) await expect(frame.getByTestId('widget')).toContainText(help);
      if (lang === 'en') expect(await widgetText(frame)).not.toContain(empty.vi);
      await expect(frame.locator('[data-testid="restaurant"], [data-testid="gift"], [data-testid="booking-row"], [data-testid="forecast-day"]')).toHaveCount(0);
      await shot(page, testInfo, `${empty.sample}-${lang}`);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Errors: a friendly sentence chosen by code, in the person's language; never the model's message.

const CODES: { code: string; kind: string; retryable: boolean }[] = [
  { code: 'VALIDATION_ERROR', kind: 'validation', retryable: false },
  { code: 'UNKNOWN_TOOL', kind: 'validation', retryable: false },
  { code: 'NOT_FOUND', kind: 'validation', retryable: false },
  { code: 'DRAFT_ALREADY_COMMITTED', kind: 'validation', retryable: false },
  { code: 'UPSTREAM_UNAVAILABLE', kind: 'infrastructure', retryable: true },
  { code: 'UPSTREAM_TIMEOUT', kind: 'infrastructure', retryable: false },
  { code: 'STORAGE_UNAVAILABLE', kind: 'infrastructure', retryable: true },
  { code: 'IDEMPOTENCY_KEY_IN_USE', kind: 'platform', retryable: true },
  { code: 'IDEMPOTENCY_KEY_REUSED', kind: 'platform', retryable: false },
  { code: 'DECISION_IN_PROGRESS', kind: 'platform', retryable: true },
  { code: 'DECLINED', kind: 'not_run', retryable: false },
  { code: 'CANCELLED', kind: 'not_run', retryable: false },
  { code: 'INTERRUPTED', kind: 'not_run', retryable: false },
  { code: 'EXECUTION_FAILED', kind: 'internal', retryable: false },
  { code: 'SIGN_IN_REQUIRED', kind: 'auth', retryable: false },
  { code: 'RATE_LIMITED', kind: 'limit', retryable: true },
];

const MODEL_MESSAGE = 'MODEL-ONLY English text: tell the user that nothing happened';

function errorResult(code: string, retryable: boolean, tool = 'getWeather', input: unknown = { city: 'Huế', days: 1 }) {
  const sc: Record<string, unknown> = { v: 1, ok: false, tool, callId: 'call_e1', error: { code, message: MODEL_MESSAGE, retryable } };
  if (input) sc.input = input;
  return { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc, isError: true };
}

const VIETNAMESE = /[ăâđêôơưàáạảãằắặẳẵầấậẩẫèéẹẻẽềếệểễìíịỉĩòóọỏõồốộổỗờớợởỡùúụủũừứựửữỳýỵỷỹ]/i;

for (const lang of ['vi', 'en'] as const) {
  test(`every error code gets its own friendly ${lang} sentence and next step, never the model's message`, async ({ page }, testInfo) => {
    const sentences = new Map<string, string>();
    for (const { code, kind, retryable } of CODES) {
      const frame = await bridge(page, errorResult(code, retryable), lang);
      const root = frame.getByTestId('widget');
      await expect(root).toHaveAttribute('data-state', 'error');
      const notice = frame.getByTestId('error-notice');
      await expect(notice).toBeVisible();
      await expect(notice).toHaveAttribute('data-error-code', code);
      await expect(notice).toHaveAttribute('data-error-class', kind);
      await expect(notice).toHaveAttribute('role', kind === 'not_run' ? 'status' : 'alert');
      await expect(notice).toContainText(lang === 'vi' ? 'Không xem được thời tiết' : 'Could not get the weather');
      const sentence = (await frame.getByTestId('error-sentence').innerText()).trim();
      const next = (await frame.getByTestId('error-next').innerText()).trim();
      expect(sentence, code).not.toBe('');
      expect(next, code).not.toBe('');
      expect(VIETNAMESE.test(sentence), `${code}: "${sentence}" is ${lang}`).toBe(lang === 'vi');
      expect(await widgetText(frame)).not.toContain('MODEL-ONLY');
      expect([...sentences.values()], `${code} has a sentence of its own`).not.toContain(sentence);
      sentences.set(code, sentence);
      // Retrying is offered exactly when the server says it may work.
      await expect(frame.getByTestId('btn-retry')).toHaveCount(retryable ? 1 : 0);
      if (code === 'UPSTREAM_UNAVAILABLE') await shot(page, testInfo, `error-${code}-${lang}`);
    }
  });
}

test('an error with no structured content and an unknown code still reads as a friendly notice', async ({ page }) => {
  let frame = await bridge(page, { content: [{ type: 'text', text: 'boom' }], isError: true }, 'en');
  await expect(frame.getByTestId('error-notice')).toContainText('Something went wrong; nothing was done.');
  expect(await widgetText(frame)).not.toContain('boom');
  frame = await bridge(page, errorResult('SOMETHING_NEW', false), 'vi');
  await expect(frame.getByTestId('error-notice')).toContainText('Đã có lỗi xảy ra; chưa có gì được thực hiện.');
  expect(await widgetText(frame)).not.toContain('MODEL-ONLY');
});

test('retry calls the same tool again with its input, once, and shows the new result', async ({ page }) => {
  const frame = await bridge(page, errorResult('UPSTREAM_TIMEOUT', true, 'getWeather', { city: 'Hà Nội', days: 2 }), 'vi', {
    replies: { getWeather: [sample('weather')] },
    delayMs: 300,
  });
  const retry = frame.getByTestId('btn-retry');
  await expect(retry).toHaveText('Thử lại');
  await retry.dblclick();
  await expect(frame.getByTestId('card-weather')).toBeVisible();
  const { calls } = await hostState(page);
  expect(calls).toEqual([{ name: 'getWeather', arguments: { city: 'Hà Nội', days: 2 } }]);
});

// ---------------------------------------------------------------------------------------------
// The confirmation form.

test('booking form: edited party size and time, a double click sends exactly one decide_approval; the receipt follows', async ({ page }, testInfo) => {
  const frame = await bridge(page, sample('bookingApproval'), 'vi', { replies: { decide_approval: [sample('bookingReceipt')] }, delayMs: 400 });
  const root = frame.getByTestId('widget');
  await expect(root).toHaveAttribute('data-state', 'approval_required');
  await expect(root).toHaveAttribute('data-tool', 'createBooking');
  const form = frame.getByTestId('form-approval');
  await expect(form).toContainText('Yêu cầu đặt bàn');
  await expect(frame.getByTestId('approval-restaurant')).toHaveText('hn-bun-cha-01');
  await expect(frame.getByTestId('approval-when')).toHaveText('19:00, thứ Năm, 24/12/2026 · 4 người');
  await expect(form).toContainText('Giờ địa phương của nhà hàng (UTC+07:00)');
  // Labelled inputs, pre-filled from the input in its own offset.
  const party = frame.getByLabel('Số người');
  const when = frame.getByLabel('Thời gian');
  await expect(party).toHaveValue('4');
  await expect(when).toHaveValue('2026-12-24T19:00');
  // The model's English summary is not shown to the person, and no receipt exists yet.
  expect(await widgetText(frame)).not.toContain('Nothing has happened yet');
  await expect(frame.locator('[data-testid^="receipt-"]')).toHaveCount(0);
  await shot(page, testInfo, 'booking-form-vi');

  await party.fill('6');
  await when.fill('2026-12-24T20:30');
  await expect(frame.getByTestId('approval-when')).toHaveText('20:30, thứ Năm, 24/12/2026 · 6 người');
  const confirm = frame.getByRole('button', { name: 'Xác nhận' });
  await confirm.dblclick();
  await expect(frame.getByTestId('btn-confirm')).toBeDisabled();
  await expect(frame.getByTestId('btn-decline')).toBeDisabled();
  await expect(frame.getByTestId('sending-status')).toHaveText('Đang gửi…');
  await confirm.click({ force: true }).catch(() => {});

  const receipt = frame.getByTestId('receipt-booking');
  await expect(receipt).toBeVisible();
  await expect(root).toHaveAttribute('data-state', 'done');
  await expect(receipt).toContainText('BK-1A2B3C4D');
  await expect(frame.getByTestId('form-approval')).toHaveCount(0);
  const { calls, log } = await hostState(page);
  expect(calls).toEqual([{
    name: 'decide_approval',
    arguments: {
      approvalId: 'call_appr1',
      approvalToken: 'tok-7f3a9c',
      approved: true,
      input: { restaurantId: 'hn-bun-cha-01', partySize: 6, startsAt: '2026-12-24T20:30:00+07:00' },
    },
  }]);
  // The model hears of the decision through the context update, without the token.
  const update = log.find((m: any) => m.method === 'ui/update-model-context');
  expect(update?.params?.structuredContent?.status).toBe('done');
  expect(JSON.stringify(update)).not.toContain('tok-7f3a9c');
  await shot(page, testInfo, 'booking-receipt-after-confirm-vi');
});

test('two clicks in the same task still send one decision (the guard flag, not only disabled buttons)', async ({ page }) => {
  const frame = await bridge(page, sample('bookingApproval'), 'en', { replies: { decide_approval: [sample('bookingReceipt')] } });
  await expect(frame.getByTestId('btn-confirm')).toHaveText('Confirm');
  await frame.getByTestId('btn-confirm').evaluate((button: HTMLButtonElement) => {
    button.click();
    button.click();
    // Enter in a field confirms too.
    button.form?.querySelector('input')?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
  });
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  const { calls } = await hostState(page);
  expect(calls).toHaveLength(1);
  // Nothing was edited: `input` is left out.
  expect(calls[0]).toEqual({ name: 'decide_approval', arguments: { approvalId: 'call_appr1', approvalToken: 'tok-7f3a9c', approved: true } });
});

test('decline sends approved:false without input, and the declined notice follows', async ({ page }, testInfo) => {
  const frame = await bridge(page, sample('bookingApproval'), 'en', { replies: { decide_approval: [sample('bookingDeclined')] } });
  await frame.getByLabel('Party size').fill('7');
  await frame.getByRole('button', { name: 'Decline' }).click();
  await expect(frame.getByTestId('declined-notice')).toHaveText('You declined — no table was booked.');
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'declined');
  await expect(frame.locator('[data-testid^="receipt-"]')).toHaveCount(0);
  const { calls } = await hostState(page);
  expect(calls).toEqual([{ name: 'decide_approval', arguments: { approvalId: 'call_appr1', approvalToken: 'tok-7f3a9c', approved: false } }]);
  await shot(page, testInfo, 'booking-declined-en');
});

test('an invalid party size is refused in the form and sends nothing', async ({ page }) => {
  const frame = await bridge(page, sample('bookingApproval'), 'vi', { replies: { decide_approval: [sample('bookingReceipt')] } });
  await frame.getByLabel('Số người').fill('25');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('form-error')).toHaveText('Số người phải là một số từ 1 đến 20.');
  await expect(frame.getByTestId('form-error')).toHaveAttribute('role', 'alert');
  expect((await hostState(page)).calls).toEqual([]);
  await frame.getByLabel('Số người').fill('5');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  expect((await hostState(page)).calls[0].arguments.input).toEqual({ restaurantId: 'hn-bun-cha-01', partySize: 5, startsAt: '2026-12-24T19:00:00+07:00' });
});

test('a retryable failure keeps the form usable; the second try sends again and shows the receipt', async ({ page }, testInfo) => {
  const storage = errorResult('STORAGE_UNAVAILABLE', true, 'createBooking', null);
  const frame = await bridge(page, sample('bookingApproval'), 'vi', { replies: { decide_approval: [storage, sample('bookingReceipt')] } });
  await frame.getByTestId('btn-confirm').click();
  const notice = frame.getByTestId('error-notice');
  await expect(notice).toBeVisible();
  await expect(notice).toHaveAttribute('data-error-code', 'STORAGE_UNAVAILABLE');
  await expect(notice).toContainText('Chưa gửi được quyết định của bạn');
  expect(await widgetText(frame)).not.toContain('MODEL-ONLY');
  await expect(frame.getByTestId('form-approval')).toBeVisible();
  await expect(frame.getByTestId('btn-confirm')).toBeEnabled();
  await expect(frame.locator('[data-testid^="receipt-"]')).toHaveCount(0);
  await shot(page, testInfo, 'booking-form-retryable-error-vi');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  expect((await hostState(page)).calls).toHaveLength(2);
});

test('a decision racing another one (DECISION_IN_PROGRESS) says to wait and keeps the form usable', async ({ page }) => {
  const racing = errorResult('DECISION_IN_PROGRESS', true, 'createBooking', null);
  const frame = await bridge(page, sample('bookingApproval'), 'vi', { replies: { decide_approval: [racing, sample('bookingReceipt')] } });
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('error-sentence')).toHaveText('Quyết định của bạn đang được thực hiện ngay lúc này.');
  await expect(frame.getByTestId('error-next')).toContainText('Đợi giây lát');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  expect((await hostState(page)).calls).toHaveLength(2);
});

test('an edit the server rejects (VALIDATION_ERROR) keeps the form open to fix it', async ({ page }) => {
  const rejected = errorResult('VALIDATION_ERROR', false, 'createBooking', null);
  const frame = await bridge(page, sample('bookingApproval'), 'en', { replies: { decide_approval: [rejected, sample('bookingReceipt')] } });
  await frame.getByLabel('Time').fill('2020-01-01T10:00');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('error-notice')).toContainText('Some of the details were not valid');
  await expect(frame.getByLabel('Time')).toBeEnabled();
  await expect(frame.getByLabel('Time')).toHaveValue('2020-01-01T10:00');
  await frame.getByLabel('Time').fill('2026-12-24T20:30');
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  const { calls } = await hostState(page);
  expect(calls.map((c: any) => c.arguments.input.startsAt)).toEqual(['2020-01-01T10:00:00+07:00', '2026-12-24T20:30:00+07:00']);
});

test('a JSON-RPC error keeps the form usable; a final failure replaces it with the error', async ({ page }) => {
  const gone = errorResult('NOT_FOUND', false, 'decide_approval', null);
  const frame = await bridge(page, sample('bookingApproval'), 'en', {
    replies: { decide_approval: [{ jsonrpcError: { code: -32603, message: 'host failure' } }, gone] },
  });
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('error-notice')).toContainText('The app could not reach the server; nothing changed.');
  expect(await widgetText(frame)).not.toContain('host failure');
  await expect(frame.getByTestId('btn-confirm')).toBeEnabled();
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'error');
  await expect(frame.getByTestId('error-notice')).toHaveAttribute('data-error-code', 'NOT_FOUND');
  await expect(frame.getByTestId('form-approval')).toHaveCount(0);
  await expect(frame.locator('[data-testid^="receipt-"]')).toHaveCount(0);
  expect((await hostState(page)).calls).toHaveLength(2);
});

test('cancel form shows the booking id; confirm sends the token without input and the cancellation receipt follows', async ({ page }, testInfo) => {
  const frame = await bridge(page, sample('cancelApproval'), 'vi', { replies: { decide_approval: [sample('cancelReceipt')] } });
  await expect(frame.getByTestId('form-approval')).toHaveAttribute('data-tool', 'cancelBooking');
  await expect(frame.getByTestId('approval-booking-id')).toHaveText('BK-1A2B3C4D');
  await expect(frame.getByTestId('form-approval')).toContainText('Bạn có chắc muốn huỷ đặt chỗ này?');
  await expect(frame.getByRole('button', { name: 'Từ chối' })).toBeVisible();
  await shot(page, testInfo, 'cancel-form-vi');
  await frame.getByRole('button', { name: 'Xác nhận' }).click();
  await expect(frame.getByTestId('receipt-cancel')).toContainText('Đã huỷ đặt chỗ BK-1A2B3C4D');
  expect((await hostState(page)).calls).toEqual([
    { name: 'decide_approval', arguments: { approvalId: 'call_appr2', approvalToken: 'tok-cancel-55', approved: true } },
  ]);
});

test('checkout form shows the draft id; confirm leads to the fictional receipt', async ({ page }, testInfo) => {
  const frame = await bridge(page, sample('checkoutApproval'), 'en', { replies: { decide_approval: [sample('checkoutReceipt')] } });
  await expect(frame.getByTestId('approval-draft-id')).toHaveText('DR-9F8E7D');
  await expect(frame.getByTestId('form-approval')).toContainText('Confirm the gift purchase');
  await expect(frame.getByTestId('form-approval')).toContainText('no real money is charged');
  await shot(page, testInfo, 'checkout-form-en');
  await frame.getByRole('button', { name: 'Confirm' }).click();
  await expect(frame.getByTestId('receipt-checkout')).toContainText('CO-4D5E6F');
  expect((await hostState(page)).calls).toEqual([
    { name: 'decide_approval', arguments: { approvalId: 'call_appr3', approvalToken: 'tok-checkout-77', approved: true } },
  ]);
});

test('without an approval token the form links to the confirmation page instead of buttons', async ({ page }, testInfo) => {
  for (const lang of ['vi', 'en'] as const) {
    const result = sample('bookingApproval');
    delete result._meta;
    const frame = await bridge(page, result, lang);
    await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'approval_required');
    const link = frame.getByTestId('approval-link');
    await expect(link).toHaveText(lang === 'vi' ? 'Mở trang xác nhận' : 'Open the confirmation page');
    await expect(link).toHaveAttribute('href', 'https://datban.app/?c=conv_mcp0123');
    await expect(frame.getByTestId('btn-confirm')).toHaveCount(0);
    await expect(frame.getByTestId('btn-decline')).toHaveCount(0);
    await expect(frame.locator('input')).toHaveCount(0);
    await shot(page, testInfo, `booking-no-token-${lang}`);
  }
  // A URL that is not http(s) is never made a link.
  const result = sample('bookingApproval');
  delete result._meta;
  result.structuredContent.approvalUrl = 'javascript:alert(1)';
  const frame = await bridge(page, result, 'en');
  await expect(frame.getByTestId('approval-link')).toHaveCount(0);
  await expect(frame.getByTestId('form-approval')).toContainText('Reply to the assistant to confirm or decline.');
  expect((await hostState(page)).calls).toEqual([]);
});

test('the approval link asks the host to open it when the host can', async ({ page }) => {
  const result = sample('bookingApproval');
  delete result._meta;
  const frame = await bridge(page, result, 'en', { openLinks: true });
  await frame.getByTestId('approval-link').click();
  await expect.poll(async () => (await hostState(page)).log.filter((m: any) => m.method === 'ui/open-link').map((m: any) => m.params))
    .toEqual([{ url: 'https://datban.app/?c=conv_mcp0123' }]);
});

// ---------------------------------------------------------------------------------------------
// Versions, the bridge's handshake, theme and size.

test('an unknown contract version shows the update notice, not a broken card', async ({ page }, testInfo) => {
  for (const lang of ['vi', 'en'] as const) {
    const frame = await bridge(page, sample('futureVersion'), lang);
    await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'unsupported');
    await expect(frame.getByTestId('version-notice')).toContainText(lang === 'vi' ? 'Ứng dụng cần được cập nhật' : 'This app needs an update');
    await expect(frame.getByTestId('version-notice')).toContainText(lang === 'vi' ? 'tải lại trang' : 'reload the page');
    await expect(frame.getByTestId('card-weather')).toHaveCount(0);
    await shot(page, testInfo, `version-notice-${lang}`);
  }
  // A status or tool this build does not know is the same case.
  const unknownStatus = sample('weather');
  unknownStatus.structuredContent.status = 'queued';
  let frame = await bridge(page, unknownStatus, 'en');
  await expect(frame.getByTestId('version-notice')).toBeVisible();
  const unknownTool = sample('weather');
  unknownTool.structuredContent.tool = 'getTides';
  frame = await bridge(page, unknownTool, 'en');
  await expect(frame.getByTestId('version-notice')).toBeVisible();
  // And a receipt is never drawn from an output that is not a receipt's.
  const notAReceipt = sample('bookingReceipt');
  notAReceipt.structuredContent.output = { status: 'confirmed' };
  frame = await bridge(page, notAReceipt, 'en');
  await expect(frame.getByTestId('version-notice')).toBeVisible();
  await expect(frame.getByTestId('receipt-booking')).toHaveCount(0);
});

test('the handshake: ui/initialize with the app info, then initialized, then size reports', async ({ page }) => {
  const frame = await bridge(page, sample('weather'), 'vi');
  await expect(frame.getByTestId('card-weather')).toBeVisible();
  await expect.poll(async () => (await hostState(page)).sizes.length).toBeGreaterThan(0);
  const { log, initParams, initializedAt, sizes } = await hostState(page);
  expect(log[0].method).toBe('ui/initialize');
  expect(typeof log[0].id).toBe('number');
  expect(initParams).toEqual({ appInfo: { name: 'datban', version: '1' }, appCapabilities: {}, protocolVersion: '2026-01-26' });
  expect(initializedAt).toBe(1);
  expect(log[1]).toEqual({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
  const last = sizes[sizes.length - 1];
  expect(last.width).toBeGreaterThan(200);
  expect(last.height).toBeGreaterThan(80);
  // The host sized the iframe to the report, so the whole card is visible.
  const box = await page.locator('#widget').boundingBox();
  expect(Math.round(box!.height)).toBe(last.height);
});

test('tool-input shows the loading state until the result arrives; a cancelled tool says so', async ({ page }) => {
  let frame = await startHost(page, { locale: 'en-US', theme: 'light', toolInput: { city: 'Huế' } });
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'loading');
  await expect(frame.getByTestId('loading')).toContainText('Loading the result…');
  await expect.poll(async () => (await hostState(page)).initializedAt).toBe(1);
  await page.evaluate((result) => (window as any).host.send('ui/notifications/tool-result', result), sample('weather'));
  await expect(frame.getByTestId('card-weather')).toBeVisible();

  frame = await startHost(page, { locale: 'vi-VN', theme: 'light' });
  await expect.poll(async () => (await hostState(page)).initializedAt).toBe(1);
  await page.evaluate(() => (window as any).host.send('ui/notifications/tool-cancelled', { reason: 'user stopped' }));
  await expect(frame.getByTestId('cancelled-notice')).toHaveText('Đã dừng — không có gì thay đổi.');
});

test('dark theme and language follow the host context, and its later changes', async ({ page }, testInfo) => {
  const frame = await bridge(page, sample('gifts'), 'en', { theme: 'dark' });
  await expect(frame.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(frame.locator('html')).toHaveAttribute('lang', 'en');
  const dark = await frame.locator('body').evaluate((b) => getComputedStyle(b).backgroundColor);
  await shot(page, testInfo, 'gifts-dark-en');
  await page.evaluate(() => (window as any).host.send('ui/notifications/host-context-changed', { theme: 'light', locale: 'vi-VN' }));
  await expect(frame.locator('html')).toHaveAttribute('data-theme', 'light');
  await expect(frame.getByTestId('card-gifts')).toContainText('2 gợi ý quà');
  const light = await frame.locator('body').evaluate((b) => getComputedStyle(b).backgroundColor);
  expect(dark).not.toBe(light);
  expect(light).toBe('rgb(255, 255, 255)');
});

test('without a host locale the browser language decides', async ({ page }) => {
  // Pinned in the frame: Chromium runs sandboxed iframes in a process of their own, where
  // Playwright's locale emulation arrives too late to rely on.
  const pin = (lang: string) => `<script>Object.defineProperty(navigator, 'language', { value: '${lang}' });<\/script>`;
  let frame = await bridge(page, sample('shipping'), 'vi', { locale: undefined, prelude: pin('vi-VN') });
  await expect(frame.getByTestId('card-shipping')).toContainText('Báo giá giao hàng');
  frame = await bridge(page, sample('shipping'), 'vi', { locale: undefined, prelude: pin('de-DE') });
  await expect(frame.getByTestId('card-shipping')).toContainText('Shipping quote');
});

// ---------------------------------------------------------------------------------------------
// ChatGPT: window.openai instead of the bridge.

/** A window.openai that records calls to the host page, injected before the widget's script. */
function openaiPrelude(globals: Record<string, unknown>, reply: unknown) {
  const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
  return `<script>
    window.openai = Object.assign(${json(globals)}, {
      callTool(name, args) {
        parent.postMessage({ __test: 'openai-call', name, args }, '*');
        return new Promise((resolve) => setTimeout(() => resolve(${json(reply)}), 80));
      },
      notifyIntrinsicHeight(height) {
        parent.postMessage({ __test: 'height', height }, '*');
      },
      setWidgetState(state) {
        window.openai.widgetState = state;
        parent.postMessage({ __test: 'widget-state', state }, '*');
        return Promise.resolve();
      },
    });
  <\/script>`;
}

test('window.openai: the form from toolOutput and toolResponseMetadata, one callTool, then the receipt', async ({ page }, testInfo) => {
  const approval = sample('bookingApproval');
  const frame = await startHost(page, {
    prelude: openaiPrelude(
      { locale: 'en-US', theme: 'dark', toolInput: approval.structuredContent.input, toolOutput: approval.structuredContent, toolResponseMetadata: approval._meta, widgetState: null },
      sample('bookingReceipt'),
    ),
  });
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'approval_required');
  await expect(frame.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(frame.getByTestId('approval-when')).toHaveText('19:00, Thu 24 Dec 2026 · 4 people');
  // The height goes to ChatGPT through notifyIntrinsicHeight, where it exists.
  await expect.poll(() => page.locator('#widget').evaluate((f) => f.getBoundingClientRect().height)).toBeGreaterThan(250);
  await shot(page, testInfo, 'openai-booking-form-en');
  await frame.getByLabel('Party size').fill('2');
  await frame.getByRole('button', { name: 'Confirm' }).dblclick();
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  const { openaiCalls, widgetStates, log } = await hostState(page);
  expect(openaiCalls).toEqual([{
    name: 'decide_approval',
    args: { approvalId: 'call_appr1', approvalToken: 'tok-7f3a9c', approved: true, input: { restaurantId: 'hn-bun-cha-01', partySize: 2, startsAt: '2026-12-24T19:00:00+07:00' } },
  }]);
  // No bridge traffic when window.openai is there.
  expect(log).toEqual([]);
  // The decision is kept in widgetState (which the model may read), never with the token.
  expect(widgetStates).toHaveLength(1);
  expect(widgetStates[0].datban.callId).toBe('call_appr1');
  expect(widgetStates[0].datban.result.status).toBe('done');
  expect(JSON.stringify(widgetStates)).not.toContain('tok-7f3a9c');
  await shot(page, testInfo, 'openai-booking-receipt-en');
});

test('window.openai: toolOutput arriving later through openai:set_globals, and a decision kept in widgetState', async ({ page }) => {
  let frame = await startHost(page, { prelude: openaiPrelude({ locale: 'vi', theme: 'light', toolOutput: null, toolResponseMetadata: null }, null) });
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'loading');
  await frame.locator('body').evaluate((_body, output) => {
    const openai = (window as any).openai;
    openai.toolOutput = output;
    window.dispatchEvent(new CustomEvent('openai:set_globals', { detail: { globals: { toolOutput: output } } }));
  }, sample('weather').structuredContent);
  await expect(frame.getByTestId('card-weather')).toContainText('Thời tiết Hà Nội');

  // Reopened after a decision: the stored outcome, not the form again.
  const approval = sample('bookingApproval');
  frame = await startHost(page, {
    prelude: openaiPrelude({
      locale: 'en', toolOutput: approval.structuredContent, toolResponseMetadata: approval._meta,
      widgetState: { datban: { callId: 'call_appr1', result: sample('bookingReceipt').structuredContent } },
    }, null),
  });
  await expect(frame.getByTestId('receipt-booking')).toBeVisible();
  await expect(frame.getByTestId('form-approval')).toHaveCount(0);
});

test('window.openai: a callTool that resolves with a JSON string result is read too; a rejected one keeps the form', async ({ page }) => {
  const approval = sample('checkoutApproval');
  const globals = { locale: 'vi', toolOutput: approval.structuredContent, toolResponseMetadata: approval._meta };
  let frame = await startHost(page, { prelude: openaiPrelude(globals, { result: JSON.stringify(sample('checkoutReceipt')) }) });
  await frame.getByTestId('btn-confirm').click();
  await expect(frame.getByTestId('receipt-checkout')).toContainText('CO-4D5E6F');

  frame = await startHost(page, {
    prelude: openaiPrelude(globals, null).replace('resolve(null)', 'resolve(Promise.reject(new Error("offline")))'),
  });
  await frame.getByTestId('btn-decline').click();
  await expect(frame.getByTestId('error-notice')).toContainText('Ứng dụng chưa liên lạc được với máy chủ');
  await expect(frame.getByTestId('btn-decline')).toBeEnabled();
  expect((await hostState(page)).openaiCalls).toEqual([
    { name: 'decide_approval', args: { approvalId: 'call_appr3', approvalToken: 'tok-checkout-77', approved: false } },
  ]);
});

test('the widget file is self-contained and small', async () => {
  expect(Buffer.byteLength(WIDGET, 'utf8')).toBeLessThan(50 * 1024);
  expect(WIDGET).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|url\(|\beval\(|new Function|fetch\(|XMLHttpRequest|WebSocket|\.wasm/i);
  expect(WIDGET).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
});
