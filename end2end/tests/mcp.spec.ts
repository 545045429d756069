import { test, expect } from '@playwright/test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// datban's MCP servers through the official TypeScript clients over a real socket: the
// 2026-07-28 era (@modelcontextprotocol/client 2.x, which negotiates the newest revision)
// and the older one (@modelcontextprotocol/sdk 1.x: initialize + 2025-era revisions).

const base = process.env.DATBAN_BASE_URL ?? 'http://127.0.0.1:3000';

const TOOLS: Record<string, string[]> = {
  restaurant: ['getWeather', 'searchRestaurants', 'checkAvailability', 'createBooking', 'listBookings', 'cancelBooking', 'decide_approval'],
  gifts: ['suggest_gifts', 'prepare_checkout', 'create_checkout_session', 'decide_approval'],
  shipping: ['shipping_quote'],
};

type Any = Record<string, any>;

async function connect(assistant: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client(
    { name: 'datban-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } } as Any,
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/${assistant}`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

async function connectV1(assistant: string, headers: Record<string, string> = {}): Promise<ClientV1> {
  const client = new ClientV1({ name: 'datban-e2e-v1', version: '1.0.0' });
  const transport = new TransportV1(new URL(`${base}/mcp/${assistant}`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

function structured(result: Any): Any {
  expect(result.structuredContent, JSON.stringify(result)).toBeTruthy();
  // The text content is the same JSON, for hosts that give the model only the text.
  const text = (result.content as Any[]).find((c) => c.type === 'text')?.text;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

function expectTools(tools: Any[], assistant: string) {
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS[assistant]].sort());
  for (const tool of tools) {
    expect(tool.inputSchema.type, tool.name).toBe('object');
    expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    expect(tool.outputSchema.type, tool.name).toBe('object');
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      expect(typeof tool.annotations[hint], `${tool.name} ${hint}`).toBe('boolean');
    }
    const meta = tool._meta;
    expect(meta.ui.resourceUri).toMatch(/^ui:\/\/datban\/widget-[0-9a-f]{12}\.html$/);
    expect(meta['openai/outputTemplate']).toMatch(/^ui:\/\/datban\/widget-[0-9a-f]{12}\.skybridge\.html$/);
    expect(meta['openai/widgetAccessible']).toBe(true);
    for (const key of ['openai/toolInvocation/invoking', 'openai/toolInvocation/invoked']) {
      expect(meta[key].length, `${tool.name} ${key}`).toBeLessThanOrEqual(64);
      expect(meta[key].length).toBeGreaterThan(0);
    }
    expect(Array.isArray(meta.securitySchemes)).toBe(true);
    if (tool.name === 'decide_approval') {
      expect(meta.ui.visibility).toEqual(['app']);
      expect(meta['openai/visibility']).toBe('private');
    } else {
      expect(meta.ui.visibility).toEqual(['model', 'app']);
      expect(tool.description).toMatch(/\[(read-only|changes data)/);
    }
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  if (assistant === 'restaurant') {
    expect(byName.getWeather.annotations.readOnlyHint).toBe(true);
    expect(byName.getWeather.annotations.openWorldHint).toBe(true);
    expect(byName.getWeather._meta.securitySchemes).toEqual([{ type: 'noauth' }]);
    expect(byName.createBooking.annotations.readOnlyHint).toBe(false);
    expect(byName.cancelBooking.annotations.destructiveHint).toBe(true);
    expect(byName.createBooking._meta.securitySchemes).toEqual([{ type: 'oauth2', scopes: ['bookings'] }]);
    expect(byName.createBooking.description).toContain('runs only after the user approves it');
  }
}

test.describe('MCP servers with the official TypeScript clients', () => {
  for (const assistant of Object.keys(TOOLS)) {
    test(`${assistant}: tools, schemas, annotations and _meta (2026-07-28 client)`, async () => {
      const client = await connect(assistant);
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getServerVersion()?.name).toBe(`datban-${assistant}`);
      const { tools } = await client.listTools();
      expectTools(tools as Any[], assistant);
      await client.close();
    });

    test(`${assistant}: the same tools for a 2025-era client`, async () => {
      const client = await connectV1(assistant);
      const version = ((client as Any)._transport as TransportV1).protocolVersion;
      expect(['2025-06-18', '2025-11-25']).toContain(version);
      const { tools } = await client.listTools();
      expectTools(tools as Any[], assistant);
      await client.close();
    });
  }

  test('public tools run through the validator and executors, on both eras', async () => {
    for (const client of [await connect('restaurant'), await connectV1('restaurant')]) {
      const weather = structured(await client.callTool({ name: 'getWeather', arguments: { city: 'Đà Lạt', days: 3 } }));
      expect(weather).toMatchObject({ v: 1, ok: true, tool: 'getWeather', status: 'done' });
      expect(weather.output.days).toHaveLength(3);

      const search = structured(
        await client.callTool({ name: 'searchRestaurants', arguments: { city: 'Hà Nội', partySize: 2 } }),
      );
      expect(search).toMatchObject({ ok: true, status: 'done', tool: 'searchRestaurants' });
      expect(Array.isArray(search.output.restaurants)).toBe(true);

      // A table at 19:00 a week ahead (the restaurant's own offset), through the same executor.
      const day = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString().slice(0, 10);
      const table = structured(
        await client.callTool({
          name: 'checkAvailability',
          arguments: { restaurantId: 'hn-cha-ca-thang-long', partySize: 4, startsAt: `${day}T19:00:00+07:00` },
        }),
      );
      expect(table).toMatchObject({ ok: true, status: 'done', tool: 'checkAvailability' });
      expect(table.output).toMatchObject({ restaurantName: 'Chả Cá Thăng Long', partySize: 4 });
      expect(typeof table.output.available).toBe('boolean');
      expect(table.output.nearest.length).toBeGreaterThan(0);
      const past = structured(
        await client.callTool({
          name: 'checkAvailability',
          arguments: { restaurantId: 'hn-cha-ca-thang-long', partySize: 4, startsAt: '2020-01-01T19:00:00+07:00' },
        }),
      );
      expect(past).toMatchObject({ ok: false, tool: 'checkAvailability' });
      await client.close();
    }
    const gifts = await connect('gifts');
    const ideas = structured(
      await gifts.callTool({
        name: 'suggest_gifts',
        arguments: { relationship_type: 'parent', interests: ['gardening'], budget_max: 500000 },
      }),
    );
    expect(ideas).toMatchObject({ ok: true, status: 'done', tool: 'suggest_gifts' });
    await gifts.close();
    const shipping = await connect('shipping');
    const quote = structured(
      await shipping.callTool({
        name: 'shipping_quote',
        arguments: { zone: 'regional', weight_kg: 2 },
      }),
    );
    expect(quote).toMatchObject({ ok: true, status: 'done', tool: 'shipping_quote' });
    await shipping.close();
  });

  test('an empty result is ok with its reason; our failure says nothing of our insides', async () => {
    const client = await connect('restaurant');
    const empty = structured(await client.callTool({ name: 'searchRestaurants', arguments: { city: 'Cà Mau' } }));
    expect(empty).toMatchObject({ ok: true, status: 'done' });
    expect(empty.output.restaurants).toEqual([]);
    expect(empty.output.noResultsReason).toContain('Cà Mau');
    const failed = await client.callTool({ name: 'getWeather', arguments: { city: '#fail' } });
    expect(failed.isError).toBe(true);
    const body = structured(failed);
    expect(body.error).toMatchObject({ code: 'EXECUTION_FAILED', retryable: false });
    expect(JSON.stringify(failed)).not.toMatch(/panic|\.rs|sqlite|SELECT|\/root|stack/i);
    await client.close();
  });

  test('invalid arguments never run and say precisely why', async () => {
    const client = await connect('restaurant');
    const cases: Array<[Any, RegExp]> = [
      [{ city: 5 }, /city: expected string/],
      [{}, /city: required field is missing/],
      [{ city: 'Huế', extra: true }, /extra/],
      [{ city: 'Huế', days: 40 }, /days/],
    ];
    for (const [args, message] of cases) {
      const result = await client.callTool({ name: 'getWeather', arguments: args });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      const body = structured(result);
      expect(body).toMatchObject({ v: 1, ok: false, tool: 'getWeather' });
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.retryable).toBe(false);
      expect(body.error.message).toMatch(message);
    }
    // Another assistant's tool is as unknown here as a made-up one.
    for (const name of ['shipping_quote', 'bookEverything']) {
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError).toBe(true);
      expect(structured(result).error.code).toBe('UNKNOWN_TOOL');
    }
    await client.close();
  });

  test('a personal tool without a token answers the sign-in challenge and books nothing', async () => {
    const client = await connect('restaurant');
    const result = await client.callTool({
      name: 'createBooking',
      arguments: { restaurantId: 'hn-cha-ca-thang-long', partySize: 2, startsAt: '2030-01-05T19:00:00+07:00' },
    });
    expect(result.isError).toBe(true);
    expect(structured(result).error.code).toBe('SIGN_IN_REQUIRED');
    const challenges = (result._meta as Any)['mcp/www_authenticate'];
    expect(challenges[0]).toMatch(
      /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp\/restaurant"/,
    );
    await client.close();
  });

  test('widget resources: both forms, with their CSP and domain', async () => {
    const client = await connect('gifts');
    const { resources } = await client.listResources();
    const mimes = resources.map((r: Any) => r.mimeType).sort();
    expect(mimes).toEqual(['text/html+skybridge', 'text/html;profile=mcp-app']);
    const tools = (await client.listTools()).tools as Any[];
    const app = resources.find((r: Any) => r.mimeType === 'text/html;profile=mcp-app') as Any;
    expect(app.uri).toBe(tools[0]._meta.ui.resourceUri);
    const read = await client.readResource({ uri: app.uri });
    const contents = read.contents[0] as Any;
    expect(contents.mimeType).toBe('text/html;profile=mcp-app');
    expect(contents.text).toContain('<html');
    expect(contents._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [] });
    const skybridge = await client.readResource({ uri: tools[0]._meta['openai/outputTemplate'] });
    const sky = skybridge.contents[0] as Any;
    expect(sky.mimeType).toBe('text/html+skybridge');
    expect(sky._meta['openai/widgetCSP']).toEqual({ connect_domains: [], resource_domains: [] });
    expect(typeof sky._meta['openai/widgetDomain']).toBe('string');
    expect(typeof sky._meta['openai/widgetDescription']).toBe('string');
    // A URI of an older build still answers (hosts cache them).
    const old = await client.readResource({ uri: 'ui://datban/widget-000000000000.html' });
    expect((old.contents[0] as Any).text).toBe(contents.text);
    await expect(client.readResource({ uri: 'ui://datban/nothing' })).rejects.toThrow();
    await client.close();
  });
});

test.describe('MCP transport guards', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (path: string, headers: Record<string, string>, body: unknown = init) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  test('each older revision is served as asked, without a session', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const response = await post('/mcp/shipping', {}, { ...init, params: { ...init.params, protocolVersion: version } });
      expect(response.status).toBe(200);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      const body = await response.json();
      expect(body.result.protocolVersion).toBe(version);
      // Stateless: the next request needs no session to be understood.
      const list = await post(
        '/mcp/shipping',
        { 'mcp-protocol-version': version },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      );
      expect(list.status).toBe(200);
      expect((await list.json()).result.tools.map((t: Any) => t.name)).toEqual(['shipping_quote']);
    }
  });

  test('a foreign Origin is refused with 403; loopback and no Origin pass', async () => {
    expect((await post('/mcp/restaurant', { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post('/mcp/restaurant', { origin: 'https://127.0.0.1:1' })).status).toBe(403);
    expect((await post('/mcp/restaurant', { origin: 'http://localhost:6274' })).status).toBe(200);
    expect((await post('/mcp/restaurant', {})).status).toBe(200);
  });

  test('CORS lets a browser client on loopback (the MCP Inspector) in, and no one else', async () => {
    const preflight = (origin: string) =>
      fetch(`${base}/mcp/restaurant`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
        },
      });
    const ok = await preflight('http://localhost:6274');
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    expect(ok.headers.get('access-control-allow-headers') ?? '').toMatch(/mcp-protocol-version/);
    const evil = await preflight('https://evil.example');
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const call = await post('/mcp/restaurant', { origin: 'http://localhost:6274', authorization: 'Bearer x' });
    expect(call.status).toBe(401);
    expect(call.headers.get('access-control-expose-headers') ?? '').toMatch(/www-authenticate/i);
  });

  test('an invalid token is 401 with the metadata link, and no cookie is issued', async () => {
    const response = await post('/mcp/restaurant', { authorization: 'Bearer not-a-token' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp\/restaurant", error="invalid_token"/,
    );
    const ok = await post('/mcp/shipping', {});
    expect(ok.headers.get('set-cookie')).toBeNull();
    // Nor do OAuth clients, which are servers too; the consent page is the browser's.
    const metadata = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('set-cookie')).toBeNull();
    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=nothing',
    });
    // RFC 6749: a request that names no client is `invalid_client`, 401.
    expect(token.status).toBe(401);
    expect((await token.json()).error).toBe('invalid_client');
    expect(token.headers.get('set-cookie')).toBeNull();
  });

  test('a body over the limit is refused and a batch of garbage is a protocol error', async () => {
    const big = { ...init, params: { ...init.params, pad: 'x'.repeat(70 * 1024) } };
    expect((await post('/mcp/restaurant', {}, big)).status).toBe(413);
    const bad = await fetch(`${base}/mcp/restaurant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{not json',
    });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });
});
