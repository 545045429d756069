import { test, expect, type Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import type { Client } from '@modelcontextprotocol/client';
import {
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  isToolVisibilityModelOnly,
  RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { connect, evening, Provider, signIn, structured, type Any } from './mcp-helpers';

// The widget inside the MCP Apps host SDK itself (@modelcontextprotocol/ext-apps, pinned in
// package.json), against the running server, the way ChatGPT or Claude mount it:
//
//   the person's browser (Playwright page, datban cookie) ── consent ──┐
//   Node: the official MCP client, signed in over OAuth ◄──────────────┘
//     createBooking, resources/read of the tool's _meta.ui.resourceUri
//   Chromium host page (https://apphost.test): ext-apps's AppBridge + PostMessageTransport
//     └ sandboxed iframe (https://widget-sandbox.test, opaque origin) with the widget's HTML
//       under the CSP its resource declares; the widget's tools/call goes through the bridge's
//       oncalltool, which forwards it to the MCP client in Node (page.exposeFunction).
//
// The fixture host (mcp-widget.spec.ts) stays for the fast, server-less cases.

const HOST_ORIGIN = 'https://apphost.test';
const WIDGET_ORIGIN = 'https://widget-sandbox.test';
const NODE_MODULES = path.join(__dirname, '..', 'node_modules');
const BRIDGE_ENTRY = '@modelcontextprotocol/ext-apps/app-bridge';
// A restaurant no other spec books (60 seats a slot): a booking here is confirmed, not waitlisted.
const RESTAURANT = { id: 'dn-mi-quang-ba-mua', name: 'Mì Quảng Bà Mua' };

// ---------------------------------------------------------------------------------------------
// ext-apps's browser code: its ESM files and their dependencies straight from node_modules,
// through an import map (no bundler). The package has no prebuilt browser bundle of the host
// side (`app-with-deps` is the View's), so bare specifiers are resolved here the way a bundler
// would for the browser: package.json `exports` with the conditions browser, import, default.

function exportTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object') {
    for (const condition of ['browser', 'import', 'default']) {
      const target = condition in entry ? exportTarget((entry as Any)[condition]) : undefined;
      if (target) return target;
    }
  }
  return undefined;
}

/** The file a bare specifier names for the browser, or undefined (e.g. a name in a comment). */
function resolveBare(spec: string): string | undefined {
  const parts = spec.split('/');
  const n = spec.startsWith('@') ? 2 : 1;
  const dir = path.join(NODE_MODULES, ...parts.slice(0, n));
  const sub = parts.slice(n).join('/');
  const manifest = path.join(dir, 'package.json');
  if (!fs.existsSync(manifest)) return undefined;
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  let exports = pkg.exports;
  if (exports) {
    if (typeof exports === 'string' || !Object.keys(exports).some((k) => k.startsWith('.'))) exports = { '.': exports };
    const target = exportTarget(exports[sub ? `./${sub}` : '.']);
    return target ? path.join(dir, target) : undefined;
  }
  return path.join(dir, sub || pkg.module || pkg.main || 'index.js');
}

const moduleUrl = (file: string) => `${HOST_ORIGIN}/node_modules/${path.relative(NODE_MODULES, file).split(path.sep).join('/')}`;

let importMap: Record<string, string> | undefined;
/** Every bare specifier reachable from the bridge's entry, mapped to its file's URL. */
function bridgeImportMap(): Record<string, string> {
  if (importMap) return importMap;
  const imports: Record<string, string> = {};
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file) || !fs.existsSync(file)) return;
    seen.add(file);
    const source = fs.readFileSync(file, 'utf8');
    for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"'\s]+)["']/g)) {
      const spec = m[1];
      if (spec.startsWith('.')) walk(path.resolve(path.dirname(file), spec));
      else if (!(spec in imports)) {
        const target = resolveBare(spec);
        if (!target) continue;
        imports[spec] = moduleUrl(target);
        walk(target);
      }
    }
  };
  const entry = resolveBare(BRIDGE_ENTRY)!;
  imports[BRIDGE_ENTRY] = moduleUrl(entry);
  walk(entry);
  importMap = imports;
  return imports;
}

// The host page. Its own code is only what a host writes around ext-apps: mount the iframe,
// connect AppBridge over PostMessageTransport before the widget loads, hand over the tool's
// input and result once the View says it is initialized, size the iframe to its reports,
// forward the View's tools/call to the MCP client, and record what passed through the bridge.
const hostPage = () => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify({ imports: bridgeImportMap() })}</script>
<style>body{margin:0;padding:12px;background:#ececec} iframe{display:block;border:0;width:460px;height:120px}</style>
</head><body>
<script type="module">
import { AppBridge, PostMessageTransport } from '${BRIDGE_ENTRY}';

window.mount = async (cfg) => {
  const record = (window.record = { calls: [], results: [], modelContext: [], sizes: [], initialized: 0, delivered: 0, errors: [], appInfo: null, appCapabilities: null });
  const iframe = document.createElement('iframe');
  iframe.id = 'widget';
  iframe.title = 'datban';
  iframe.setAttribute('sandbox', 'allow-scripts');
  document.body.append(iframe);
  const bridge = new AppBridge(
    null,
    { name: 'datban-e2e-host', version: '1.0.0' },
    { serverTools: {}, updateModelContext: { text: {}, structuredContent: {} }, logging: {} },
    { hostContext: cfg.hostContext },
  );
  bridge.oncalltool = async (params) => {
    record.calls.push(params);
    const result = await window.hostForwardToolCall(params);
    record.results.push(result);
    return result;
  };
  bridge.onupdatemodelcontext = async (params) => {
    record.modelContext.push(params);
    return {};
  };
  bridge.onerror = (error) => record.errors.push(String(error && error.message || error));
  bridge.addEventListener('sizechange', (size) => {
    record.sizes.push(size);
    if (size.height > 0) iframe.style.height = size.height + 'px';
  });
  bridge.addEventListener('initialized', async () => {
    record.initialized += 1;
    record.appInfo = bridge.getAppVersion() ?? null;
    record.appCapabilities = bridge.getAppCapabilities() ?? null;
    await bridge.sendToolInput({ arguments: cfg.toolInput });
    await bridge.sendToolResult(cfg.toolResult);
    record.delivered += 1;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  window.bridge = bridge;
  iframe.src = cfg.src;
};
</script>
</body></html>`;

/** The iframe's CSP, built from the resource's declared `_meta.ui.csp` as MCP Apps hosts do. */
function widgetCsp(csp: Any | undefined): string {
  const list = (key: string) => (Array.isArray(csp?.[key]) ? (csp![key] as string[]).join(' ') : '');
  const resources = list('resourceDomains');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src ${list('connectDomains') || "'none'"}`,
    `frame-src ${list('frameDomains') || "'none'"}`,
    `base-uri ${list('baseUriDomains') || "'self'"}`,
    "object-src 'none'",
  ]
    .map((d) => d.trim())
    .join('; ');
}

// ---------------------------------------------------------------------------------------------

interface Mounted {
  host: Page;
  client: Client;
  args: Any;
  waiting: Any;
  token: string;
  /** tools/call requests the host forwarded from the bridge to the MCP server, in order. */
  forwarded: Any[];
  /** Console errors, page errors and requests outside the host's own files. */
  problems: string[];
}

/**
 * The person (their datban cookie in `page`) signs their host in, the host proposes a booking
 * over MCP, reads the tool's widget and mounts it through AppBridge with that result.
 */
async function mountProposal(page: Page, partySize: number, days: number, locale: string): Promise<Mounted> {
  await page.goto('/bookings');
  const args = { restaurantId: RESTAURANT.id, partySize, startsAt: evening(days) };

  // Sign-in, from the challenge of an anonymous call, through the consent page.
  const anonymous = await connect('restaurant');
  const refused = await anonymous.callTool({ name: 'createBooking', arguments: args });
  expect(structured(refused).error.code).toBe('SIGN_IN_REQUIRED');
  const challenge = (refused._meta as Any)['mcp/www_authenticate'][0] as string;
  await anonymous.close();
  const provider = new Provider();
  await signIn(page, provider, 'restaurant', challenge);
  const client = await connect('restaurant', provider);

  // The host's view of the tools, through ext-apps's own helpers.
  const tools = (await client.listTools()).tools as Any[];
  const tool = (name: string) => tools.find((t) => t.name === name)!;
  const createBooking = tool('createBooking');
  const decideApproval = tool('decide_approval');
  expect(decideApproval, 'decide_approval is listed for the app').toBeTruthy();
  expect(isToolVisibilityAppOnly(decideApproval)).toBe(true);
  expect(isToolVisibilityAppOnly(createBooking)).toBe(false);
  const uri = getToolUiResourceUri(createBooking)!;
  expect(uri).toMatch(/^ui:\/\/datban\/widget-[0-9a-f]{12}\.html$/);
  expect(getToolUiResourceUri(decideApproval)).toBe(uri);

  // The widget, as the host reads it.
  const read = await client.readResource({ uri });
  expect(read.contents).toHaveLength(1);
  const resource = read.contents[0] as Any;
  expect(resource.uri).toBe(uri);
  expect(resource.mimeType).toBe(RESOURCE_MIME_TYPE);
  const html = resource.text as string;
  expect(html).toContain('data-testid="widget"');
  const csp = widgetCsp(resource._meta?.ui?.csp);
  expect(csp).toContain("connect-src 'none'");

  // The model's call: a booking waiting for the person.
  const proposed = await client.callTool({ name: 'createBooking', arguments: args });
  const waiting = structured(proposed);
  expect(waiting).toMatchObject({ ok: true, status: 'approval_required', tool: 'createBooking' });
  const token = (proposed._meta as Any)['datban/approvalToken'] as string;
  expect(token).toMatch(/^[0-9a-f]{64}$/);
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(0);

  // The host page, in the person's browser beside datban's page.
  const host = await page.context().newPage();
  const problems: string[] = [];
  host.on('console', (m) => {
    // Errors anywhere (a CSP violation in the widget, a message the transport could not
    // parse), and ext-apps's own warnings about a View misusing the protocol.
    if (m.type() === 'error' || (m.type() === 'warning' && /^\[(ext-apps|MCP Apps)\]/.test(m.text()))) {
      problems.push(`console ${m.type()}: ${m.text()}`);
    }
  });
  host.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const widgetUrl = `${WIDGET_ORIGIN}/${uri.slice('ui://'.length)}`;
  host.on('request', (r) => {
    const url = r.url();
    if (url !== widgetUrl && !url.startsWith(`${HOST_ORIGIN}/`) && !url.startsWith('data:')) problems.push(`request: ${url}`);
  });
  await host.route(`${HOST_ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/host.html') {
      return route.fulfill({ contentType: 'text/html; charset=utf-8', body: hostPage() });
    }
    const file = path.resolve(NODE_MODULES, '.' + decodeURIComponent(url.pathname).replace(/^\/node_modules/, ''));
    if (url.pathname.startsWith('/node_modules/') && file.startsWith(NODE_MODULES + path.sep) && fs.existsSync(file)) {
      return route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: fs.readFileSync(file) });
    }
    return route.fulfill({ status: 404, body: 'not found' });
  });
  await host.route(`${WIDGET_ORIGIN}/**`, (route) =>
    route.request().url() === widgetUrl
      ? route.fulfill({ contentType: 'text/html; charset=utf-8', headers: { 'content-security-policy': csp }, body: html })
      : route.fulfill({ status: 404, body: 'not found' }),
  );

  // The bridge's tool calls go to the real server through the signed-in client; a host
  // serves the app only the tools meant for it.
  const forwarded: Any[] = [];
  await host.exposeFunction('hostForwardToolCall', async (params: Any) => {
    forwarded.push(params);
    const known = tools.find((t) => t.name === params.name);
    if (known && isToolVisibilityModelOnly(known)) throw new Error(`${params.name} is not for the app`);
    return client.callTool(params as { name: string; arguments?: Record<string, unknown> });
  });

  await host.goto(`${HOST_ORIGIN}/host.html`);
  await host.waitForFunction(() => typeof (window as Any).mount === 'function');
  await host.evaluate((cfg) => (window as Any).mount(cfg), {
    src: widgetUrl,
    toolInput: args,
    toolResult: proposed,
    hostContext: {
      theme: 'light',
      locale,
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      platform: 'web',
      toolInfo: { tool: createBooking },
    },
  });
  return { host, client, args, waiting, token, forwarded, problems };
}

const recorded = (host: Page): Promise<Any> => host.evaluate(() => (window as Any).record);

/** What the handshake through AppBridge left behind, and the form the widget shows. */
async function expectForm(m: Mounted) {
  const frame = m.host.frameLocator('#widget');
  const root = frame.getByTestId('widget');
  await expect(root).toHaveAttribute('data-state', 'approval_required');
  await expect(root).toHaveAttribute('data-tool', 'createBooking');
  const rec = await recorded(m.host);
  expect(rec.initialized).toBe(1);
  expect(rec.delivered).toBe(1);
  expect(rec.appInfo).toEqual({ name: 'datban', version: '1' });
  // The widget reported its size through the bridge, and the host sized the iframe to it.
  await expect.poll(async () => (await recorded(m.host)).sizes.length).toBeGreaterThan(0);
  await expect
    .poll(async () => {
      const sizes = (await recorded(m.host)).sizes;
      const box = await m.host.locator('#widget').boundingBox();
      return Math.round(box!.height) === sizes[sizes.length - 1].height && sizes[sizes.length - 1].height > 200;
    })
    .toBe(true);
  // Nothing was called before the person clicked.
  expect(rec.calls).toEqual([]);
  expect(m.forwarded).toEqual([]);
  return frame;
}

/** The one decision the widget sent through the bridge, and the server's answer to it. */
async function expectOneDecision(m: Mounted, approved: boolean) {
  const rec = await recorded(m.host);
  const decision = { approvalId: m.waiting.approvalId, approvalToken: m.token, approved };
  expect(rec.calls).toEqual([{ name: 'decide_approval', arguments: decision }]);
  expect(m.forwarded).toEqual(rec.calls);
  expect(rec.results).toHaveLength(1);
  const answer = structured(rec.results[0]);
  expect(answer).toMatchObject({ v: 1, ok: true, tool: 'createBooking' });
  // The widget told the model what happened, through the bridge, without the token.
  await expect.poll(async () => (await recorded(m.host)).modelContext.length).toBe(1);
  const context = (await recorded(m.host)).modelContext[0];
  expect(context.structuredContent).toEqual(answer);
  expect(JSON.stringify(context)).not.toContain(m.token);
  return answer;
}

async function finish(m: Mounted) {
  // Unmounting as hosts do: ui/resource-teardown first, which the widget must answer.
  await m.host.evaluate(() => (window as Any).bridge.teardownResource({}));
  const rec = await recorded(m.host);
  expect(rec.errors, 'bridge errors').toEqual([]);
  expect(m.problems, 'console errors, page errors or foreign requests in the host page or the widget').toEqual([]);
  await m.client.close();
  await m.host.close();
}

test('in ext-apps’s AppBridge: the person confirms in the widget, the server books once, and it is on their bookings page', async ({
  page,
}) => {
  const m = await mountProposal(page, 2, 7, 'vi-VN');
  const frame = await expectForm(m);
  await expect(frame.getByTestId('approval-restaurant')).toHaveText(RESTAURANT.id);
  await expect(frame.getByTestId('approval-when')).toContainText('19:00');
  await expect(frame.getByTestId('approval-when')).toContainText('2 người');

  await frame.getByTestId('btn-confirm').click();
  const receipt = frame.getByTestId('receipt-booking');
  await expect(receipt).toBeVisible();
  await expect(receipt).toContainText('Đã xác nhận');
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'done');

  const answer = await expectOneDecision(m, true);
  expect(answer.status).toBe('done');
  const bookingId = answer.output.bookingId as string;
  expect(bookingId).toMatch(/^BK-/);
  expect(answer.output).toMatchObject({ status: 'confirmed', restaurantId: RESTAURANT.id, partySize: 2 });
  await expect(frame.getByTestId('booking-id')).toHaveText(bookingId);

  // What the server stored: the person's booking, on their own page.
  const mine = await (await page.request.get('/api/bookings')).json();
  expect(mine.bookings.map((b: Any) => b.bookingId)).toEqual([bookingId]);
  await page.goto('/bookings');
  const row = page.locator(`.booking-row[data-booking-id="${bookingId}"]`);
  await expect(row).toBeVisible();
  await expect(row.locator('.booking-row-restaurant')).toHaveText(RESTAURANT.name);
  await expect(row.locator('.booking-row-meta')).toContainText('19:00');
  await expect(row.locator('.booking-row-meta')).toContainText('2 người');
  // The decision is stored: asked again (even the other way) it answers the same booking.
  const replay = structured(
    await m.client.callTool({
      name: 'decide_approval',
      arguments: { approvalId: m.waiting.approvalId, approvalToken: m.token, approved: false },
    }),
  );
  expect(replay).toMatchObject({ status: 'done' });
  expect(replay.output.bookingId).toBe(bookingId);
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(1);
  await finish(m);
});

test('in ext-apps’s AppBridge: the person declines in the widget (in English), nothing is booked', async ({ page }) => {
  const m = await mountProposal(page, 3, 8, 'en-US');
  const frame = await expectForm(m);
  // The host's locale reached the widget through the bridge's initialize result.
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-lang', 'en');
  await expect(frame.getByTestId('approval-when')).toContainText('3 people');

  await frame.getByTestId('btn-decline').click();
  const notice = frame.getByTestId('declined-notice');
  await expect(notice).toHaveText('You declined — no table was booked.');
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-state', 'declined');
  await expect(frame.getByTestId('form-approval')).toHaveCount(0);

  const answer = await expectOneDecision(m, false);
  expect(answer.status).toBe('declined');

  // Nothing booked, on the server or on the person's page; the stored decline stands.
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(0);
  await page.goto('/bookings');
  await expect(page.locator('.bookings-empty')).toBeVisible();
  await expect(page.locator('.booking-row')).toHaveCount(0);
  const replay = structured(
    await m.client.callTool({
      name: 'decide_approval',
      arguments: { approvalId: m.waiting.approvalId, approvalToken: m.token, approved: true },
    }),
  );
  expect(replay).toMatchObject({ ok: true, status: 'declined' });
  expect((await (await page.request.get('/api/bookings')).json()).bookings).toHaveLength(0);
  await finish(m);
});
