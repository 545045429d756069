import { test, expect, type Page } from '@playwright/test';
import { settled, tool } from './helpers';

// The page in English and in Vietnamese: the language follows the switch (a `lang`
// cookie), else the browser's Accept-Language, else Vietnamese.

/** Letters only Vietnamese writes; English chrome has none. */
const VIETNAMESE = /[àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ]/i;

/**
 * The page's own words: the text of `main` (hidden text for screen readers included) and
 * its labels, placeholders and titles, without what is data (messages, restaurant names)
 * and without the switch, which names each language in that language.
 */
async function chrome(page: Page, dataSelectors: string[] = []): Promise<string> {
  return page.evaluate((skip) => {
    const main = document.querySelector('main');
    if (!main) return '';
    const copy = main.cloneNode(true) as HTMLElement;
    copy.querySelectorAll(['.lang-switch', ...skip].join(',')).forEach((node) => node.remove());
    const attributes = Array.from(copy.querySelectorAll('[aria-label], [placeholder], [title]')).flatMap((node) =>
      ['aria-label', 'placeholder', 'title'].map((name) => node.getAttribute(name) ?? ''),
    );
    return [copy.textContent ?? '', ...attributes, document.title].join('\n');
  }, dataSelectors);
}

async function openHydrated(page: Page, path = '/') {
  await page.goto(path);
  await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
}

async function sendEnglish(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

test.describe('in a browser that prefers English', () => {
  test.use({ locale: 'en-US' });

  test('the chat page is in English, and so are the weather and restaurant cards', async ({ page }) => {
    await openHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('Book a table with an assistant');
    await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
    const before = await chrome(page);
    expect(before).toContain('Choose an assistant');
    expect(before).not.toMatch(VIETNAMESE);

    await sendEnglish(page, "What's the weather in Da Nang this weekend?");
    const weather = tool(page, 'getWeather', 'output-available');
    await expect(weather).toBeVisible();
    await expect(weather.locator('.card-title')).toContainText('Weather in');
    await expect(weather.locator('.forecast-rain').first()).toHaveText(/^Rain \d+%$/);
    // Exactly the weekend's days (on a Sunday, Sunday alone is left of it), said so.
    const sunday = new Date(Date.now() + 7 * 3600_000).getUTCDay() === 0; // Vietnam's day
    const day = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2}$/;
    await expect(weather.locator('.forecast-date')).toHaveText(sunday ? [/^Sun /] : [/^Sat /, /^Sun /]);
    for (const text of await weather.locator('.forecast-date').allTextContents()) expect(text).toMatch(day);
    await expect(weather.locator('.weather-days')).toContainText(sunday ? /Sun \d{1,2} [A-Z][a-z]{2}/ : /weekend \(Sat .+ – Sun .+\)/);
    for (const selector of ['.forecast-condition', '.forecast-rain', '.forecast-date']) {
      for (const text of await weather.locator(selector).allTextContents()) {
        expect(text, selector).not.toMatch(VIETNAMESE);
      }
    }
    await settled(page);

    await sendEnglish(page, 'Find vegetarian restaurants in Hanoi');
    const search = tool(page, 'searchRestaurants', 'output-available');
    await expect(search).toBeVisible();
    const card = search.locator('.restaurant-card').first();
    await expect(card).toBeVisible();
    await expect(search.locator('.results-summary')).toHaveText(/^\d+ restaurants? in /);
    await expect(card.locator('.restaurant-cuisine')).toHaveText('vegetarian');
    await expect(card.locator('.restaurant-hours')).toContainText('Opening hours:');
    await expect(card.locator('.restaurant-price .visually-hidden')).toHaveText(/^Price level [1-4]\/4$/);
    await settled(page);

    // With a conversation on the page, the chrome around it is still English.
    const after = await chrome(page, ['.message-list']);
    expect(after).not.toMatch(VIETNAMESE);
  });

  test('the bookings page is in English, dates and people included', async ({ page }) => {
    await openHydrated(page);
    await sendEnglish(page, 'Find chả cá restaurants in Hanoi');
    await expect(tool(page, 'searchRestaurants', 'output-available')).toBeVisible();
    await settled(page);
    await sendEnglish(page, 'Book a table at Chả Cá Thăng Long for 2 people tomorrow at 19:00');
    // The confirmation form is selected by its structure, not its words.
    const form = page.locator('form.booking-form');
    await expect(form).toBeVisible();
    await form.locator('button[type="submit"]').click();
    const receipt = page.getByTestId('booking-receipt');
    await expect(receipt).toBeVisible();
    await expect(receipt.locator('.receipt-status')).toHaveText('Confirmed');
    await expect(receipt.locator('.receipt-party')).toHaveText('2 people');
    await expect(receipt.locator('.receipt-time')).toHaveText(/^7:00 PM, (Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2} \d{4}$/);
    await settled(page);
    const bookingId = (await receipt.locator('.booking-id').textContent())?.trim() ?? '';

    await openHydrated(page, '/bookings');
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('My bookings');
    const row = page.locator(`.booking-row[data-booking-id="${bookingId}"]`);
    await expect(row).toBeVisible();
    await expect(row.locator('.status-badge')).toHaveText('confirmed');
    await expect(row.locator('.booking-row-meta')).toContainText('7:00 PM');
    await expect(row.locator('.booking-row-meta')).toContainText('2 people');
    await expect(row.locator('.booking-cancel-hint')).toContainText(`Cancel booking ${bookingId}`);
    const text = await chrome(page, ['.booking-row-restaurant']);
    expect(text).toContain('Want to cancel a booking?');
    expect(text).not.toMatch(VIETNAMESE);
  });

  test('the not-found page is in English', async ({ page }) => {
    const response = await page.goto('/no-such-page');
    expect(response?.status()).toBe(404);
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('Page not found');
  });
});

test.describe('in a browser that prefers Vietnamese', () => {
  test.use({ locale: 'vi-VN' });

  test('the page is in Vietnamese', async ({ page }) => {
    await openHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', 'vi');
    await expect(page.locator('h1')).toHaveText('Đặt bàn cùng trợ lý');
    await expect(page.getByRole('button', { name: 'Gửi' })).toBeVisible();
    await expect(page.locator('.lang-option[aria-current="true"]')).toHaveAttribute('data-lang', 'vi');
  });

  test('the switch changes the language, and the choice is remembered', async ({ page, context }) => {
    await openHydrated(page, '/bookings');
    await expect(page.locator('html')).toHaveAttribute('lang', 'vi');
    await page.locator('.lang-switch').getByRole('link', { name: 'English' }).click();
    // Back on the same page, now in English.
    await expect(page).toHaveURL(/\/bookings$/);
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('My bookings');
    await expect(page.locator('main.chat')).toHaveAttribute('data-hydrated', 'true');
    expect((await context.cookies()).find((cookie) => cookie.name === 'lang')?.value).toBe('en');

    // Remembered: over the browser's own Vietnamese, after a reload and on another page.
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await openHydrated(page, '/');
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('Book a table with an assistant');
    expect(await chrome(page)).not.toMatch(VIETNAMESE);

    await page.locator('.lang-switch').getByRole('link', { name: 'Tiếng Việt' }).click();
    await expect(page.locator('html')).toHaveAttribute('lang', 'vi');
    await expect(page.locator('h1')).toHaveText('Đặt bàn cùng trợ lý');
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('lang', 'vi');
  });

  test('the switch only ever sends the browser back to this site', async ({ page }) => {
    const response = await page.request.get('/lang/en?to=//example.com/', { maxRedirects: 0 });
    expect(response.status()).toBe(303);
    expect(response.headers()['location']).toBe('/');
    expect(response.headers()['set-cookie']).toContain('lang=en');
    const unknown = await page.request.get('/lang/fr?to=/', { maxRedirects: 0 });
    expect(unknown.status()).toBe(404);
  });
});
