import { expect, type Page } from '@playwright/test';
import {
  auth,
  Client,
  StreamableHTTPClientTransport,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';

// What a host such as ChatGPT or Claude does on the MCP side, shared by the MCP specs: the
// official MCP client, an OAuth client provider whose "browser" is a Playwright page with the
// person's own cookie, and the sign-in through datban's consent page.

export const base = process.env.DATBAN_BASE_URL ?? 'http://127.0.0.1:3000';
export const CALLBACK = 'http://127.0.0.1:9/callback';

export type Any = Record<string, any>;

/** 19:00 in Hà Nội, `days` from now: a time the restaurant seats guests. */
export function evening(days: number): string {
  const day = new Date(Date.now() + days * 86_400_000 + 7 * 3_600_000).toISOString().slice(0, 10);
  return `${day}T19:00:00+07:00`;
}

/** An OAuth client provider kept in memory, whose "browser" is a Playwright page. */
export class Provider implements OAuthClientProvider {
  info?: Any;
  saved?: Any;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata() {
    return {
      client_name: 'Test Host',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    } as Any as OAuthClientProvider['clientMetadata'];
  }
  clientInformation() {
    return this.info as Any;
  }
  saveClientInformation(info: Any) {
    this.info = info;
  }
  tokens() {
    return this.saved as Any;
  }
  saveTokens(tokens: Any) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  discovery?: Any;
  saveDiscoveryState(state: Any) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The result's structuredContent, which every datban tool result has. */
export function structured(result: Any): Any {
  expect(result.structuredContent, JSON.stringify(result)).toBeTruthy();
  return result.structuredContent;
}

/** The official MCP client, connected to one assistant's endpoint (signed in with `provider`). */
export async function connect(assistant: string, provider?: Provider): Promise<Client> {
  const client = new Client({ name: 'test-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } } as Any);
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/${assistant}`), {
    authProvider: provider,
  });
  await client.connect(transport);
  return client;
}

/** Signs in through the consent page in `page` (whose cookie is the person's). */
export async function signIn(page: Page, provider: Provider, assistant: string, challenge: string) {
  const serverUrl = `${base}/mcp/${assistant}`;
  const metadata = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  expect(metadata).toBeTruthy();
  const first = await auth(provider, { serverUrl, resourceMetadataUrl: new URL(metadata!) });
  expect(first).toBe('REDIRECT');
  expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
  let callback: URL | undefined;
  await page.route(`${CALLBACK}**`, async (route) => {
    callback = new URL(route.request().url());
    await route.fulfill({ status: 200, body: 'signed in' });
  });
  await page.goto(provider.authorizationUrl!.toString());
  // Its buttons answer a click only once the page is hydrated.
  await expect(page.locator('main.consent-page')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.getByText('Test Host').first()).toBeVisible();
  await page.getByRole('button', { name: /Cho phép|Allow/ }).click();
  await expect.poll(() => callback?.searchParams.get('code') ?? null).not.toBeNull();
  const done = await auth(provider, {
    serverUrl,
    authorizationCode: callback!.searchParams.get('code')!,
    iss: callback!.searchParams.get('iss') ?? undefined,
  });
  expect(done).toBe('AUTHORIZED');
  expect(provider.saved?.access_token).toBeTruthy();
}
