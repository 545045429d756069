// What the suite needs to act as the people using datban through the AI SDK's own chat
// client: a chat state for Node (the SDK ships one per UI framework, none for plain
// Node), a fetch that keeps each person's cookies (the server knows a person only by the
// owner cookie it sets on their first response), and reads of what the server stored.

import assert from 'node:assert/strict';

const base = process.env.DATBAN_BASE_URL;
if (!base) {
  throw new Error('DATBAN_BASE_URL must name the datban server to test, e.g. http://127.0.0.1:3000');
}
/** The server under test, without a trailing slash. */
export const BASE = base.replace(/\/+$/, '');

const [nodeMajor] = process.versions.node.split('.').map(Number);
if (nodeMajor < 22) {
  throw new Error(
    `ai 7 needs Node.js 22 or newer, this is ${process.versions.node}: ` +
      'run the suite with end2end/aisdk/node_modules/.bin/node',
  );
}

/** How long a reply (and every automatic follow-up request) may take. */
const SETTLE_TIMEOUT_MS = 30_000;

/**
 * One person: a cookie jar and a fetch that uses it. `requests` records every request
 * with the status it got, so a test can replay exactly what the client sent or see what
 * the transport was answered.
 */
export function person(name) {
  const jar = new Map();
  const requests = [];
  async function cookieFetch(input, init = {}) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const headers = new Headers(init.headers);
    if (jar.size > 0) {
      headers.set('cookie', [...jar].map(([key, value]) => `${key}=${value}`).join('; '));
    }
    const entry = { method, url, body: init.body, status: undefined };
    requests.push(entry);
    const response = await fetch(input, { ...init, headers });
    entry.status = response.status;
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const key = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
      if (expired || value === '') jar.delete(key);
      else jar.set(key, value);
    }
    return response;
  }
  return { name, fetch: cookieFetch, jar, requests };
}

/**
 * `ChatState` the way the SDK's React and Vue states keep it: every change makes a new
 * array, and a replaced message is a snapshot, because the stream processor keeps
 * mutating the message object it hands over. `statuses` lists every status set, so a test
 * can tell that a call left the chat alone.
 */
class NodeChatState {
  #status = 'ready';

  constructor(messages = []) {
    this.messages = messages;
    this.error = undefined;
    this.statuses = [];
  }

  get status() {
    return this.#status;
  }

  set status(status) {
    this.statuses.push(status);
    this.#status = status;
  }

  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };

  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };

  replaceMessage = (index, message) => {
    this.messages = [
      ...this.messages.slice(0, index),
      this.snapshot(message),
      ...this.messages.slice(index + 1),
    ];
  };

  snapshot = (thing) => structuredClone(thing);
}

const chatClasses = new Map();

/** `class NodeChat extends AbstractChat` of that `ai` module. */
function chatClass(ai) {
  let NodeChat = chatClasses.get(ai);
  if (!NodeChat) {
    NodeChat = class NodeChat extends ai.AbstractChat {
      constructor({ messages, ...init }) {
        super({ ...init, state: new NodeChatState(messages) });
      }

      /** Every status the chat went through since it was made. */
      get statuses() {
        return this.state.statuses;
      }
    };
    chatClasses.set(ai, NodeChat);
  }
  return NodeChat;
}

/**
 * A chat of `who` with the restaurant assistant, over the SDK's default HTTP transport,
 * and approvals sent the moment every call of the reply is answered.
 */
export function newChat(ai, who, init = {}) {
  const NodeChat = chatClass(ai);
  return new NodeChat({
    transport: new ai.DefaultChatTransport({
      api: `${BASE}/api/chat`,
      fetch: who.fetch,
      body: { assistant: 'restaurant' },
    }),
    sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
    ...init,
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the chat is neither sending nor streaming, and stays so for a moment:
 * `addToolApprovalResponse` starts its automatic request without awaiting it.
 */
export async function settle(chat) {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let quiet = 0;
  while (quiet < 3) {
    if (Date.now() > deadline) {
      assert.fail(`the chat is still '${chat.status}' after ${SETTLE_TIMEOUT_MS} ms`);
    }
    await sleep(20);
    quiet = chat.status === 'submitted' || chat.status === 'streaming' ? 0 : quiet + 1;
  }
}

/** Waits until `predicate()` holds, checking every few milliseconds. */
export async function until(predicate, what, timeoutMs = SETTLE_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The chat ended its last request without an error. */
export function assertReady(chat) {
  assert.equal(
    chat.error,
    undefined,
    `the chat has an error: ${chat.error?.message?.slice(0, 800)}`,
  );
  assert.equal(chat.status, 'ready');
}

export function lastAssistant(messages) {
  const message = messages.at(-1);
  assert.ok(message, 'the chat has no messages');
  assert.equal(message.role, 'assistant', `the last message is a ${message.role} message`);
  return message;
}

/** The message's parts of tool `name` (`tool-<name>`). */
export function toolParts(message, name) {
  return message.parts.filter((part) => part.type === `tool-${name}`);
}

/** The one part of tool `name` in the message. */
export function onlyToolPart(message, name) {
  const parts = toolParts(message, name);
  assert.equal(
    parts.length,
    1,
    `expected one tool-${name} part, the message has: ${JSON.stringify(message.parts)}`,
  );
  return parts[0];
}

export function textOf(message) {
  return message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** What a message list serialises to: the client leaves `undefined` fields around. */
export function json(value) {
  return JSON.parse(JSON.stringify(value));
}

/** `GET path` as `who`: the status and the JSON body (`undefined` without one). */
export async function getJson(who, path) {
  const response = await who.fetch(`${BASE}${path}`);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, response };
}

/** `POST /api/chat` as `who` with a body of our making, read to its end. */
export async function postChat(who, body) {
  const response = await who.fetch(`${BASE}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed;
  if ((response.headers.get('content-type') ?? '').includes('application/json')) {
    parsed = JSON.parse(text);
  }
  return { status: response.status, body: parsed, text, response };
}

/** A refusal as the API writes it: one of `statuses`, with `{error: {code, message}}`. */
export function assertApiError(answer, statuses, code) {
  assert.ok(
    statuses.includes(answer.status),
    `expected HTTP ${statuses.join(' or ')}, got ${answer.status}: ${answer.text ?? ''}`.slice(0, 600),
  );
  assert.ok(answer.body, `the ${answer.status} answer is not JSON: ${answer.text}`);
  assert.equal(typeof answer.body.error?.code, 'string', JSON.stringify(answer.body));
  assert.ok(answer.body.error.code.length > 0);
  if (code) assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
}

/** `who`'s bookings as the "my bookings" page reads them. */
export async function bookingsOf(who) {
  const { status, body } = await getJson(who, '/api/bookings');
  assert.equal(status, 200, `GET /api/bookings: ${JSON.stringify(body)}`);
  assert.ok(Array.isArray(body?.bookings), `GET /api/bookings: ${JSON.stringify(body)}`);
  return body.bookings;
}

/** The conversation as the AI SDK's messages (`?format=ui`), or the refusal. */
export async function storedChat(who, id) {
  return getJson(who, `/api/conversations/${encodeURIComponent(id)}?format=ui`);
}

export const WEATHER = 'Thời tiết Hà Nội hôm nay thế nào?';
export const SEARCH = 'Tìm nhà hàng chả cá ở Hà Nội';
export const BOOK = 'Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00';
export const BOOKING_ID = /^BK-[0-9A-F]{8}$/;

/**
 * Searches, asks for a booking and returns the `tool-createBooking` part waiting for the
 * person's approval; nothing is booked yet.
 */
export async function proposeBooking(chat, who) {
  await chat.sendMessage({ text: SEARCH });
  assertReady(chat);
  const found = onlyToolPart(lastAssistant(chat.messages), 'searchRestaurants');
  assert.equal(found.state, 'output-available', JSON.stringify(found));

  await chat.sendMessage({ text: BOOK });
  assertReady(chat);
  const part = onlyToolPart(lastAssistant(chat.messages), 'createBooking');
  assert.equal(part.state, 'approval-requested', JSON.stringify(part));
  assert.equal(typeof part.approval?.id, 'string', JSON.stringify(part));
  assert.ok(part.approval.id.length > 0);
  assert.equal(part.approval.approved, undefined, 'the call is not decided yet');
  assert.equal((await bookingsOf(who)).length, 0, 'a proposal books nothing');
  return part;
}

/** The person says yes to `part` through the client; returns the part as it ends. */
export async function approve(chat, part, approved = true) {
  await chat.addToolApprovalResponse({ id: part.approval.id, approved });
  await settle(chat);
  assertReady(chat);
  const ended = lastAssistant(chat.messages).parts.find(
    (candidate) => candidate.toolCallId === part.toolCallId,
  );
  assert.ok(ended, `the reply lost call ${part.toolCallId}: ${JSON.stringify(chat.messages.at(-1))}`);
  return ended;
}

/** A booking proposed and approved; the chat, its booking part and the booking id. */
export async function book(ai, who) {
  const chat = newChat(ai, who);
  const proposed = await proposeBooking(chat, who);
  const part = await approve(chat, proposed);
  assert.equal(part.state, 'output-available', JSON.stringify(part));
  assert.match(part.output?.bookingId ?? '', BOOKING_ID, JSON.stringify(part.output));
  assert.ok(
    ['confirmed', 'waitlisted'].includes(part.output.status),
    `booking status ${part.output.status}`,
  );
  return { chat, part, bookingId: part.output.bookingId };
}

/** The body the client sent to decide on a call: the last POST carrying an answered approval. */
export function approvalRequest(who) {
  const sent = who.requests.filter((request) => {
    if (request.method !== 'POST' || typeof request.body !== 'string') return false;
    const last = JSON.parse(request.body).messages?.at(-1);
    return (
      last?.role === 'assistant' &&
      last.parts.some((part) => part.state === 'approval-responded')
    );
  });
  assert.ok(sent.length > 0, 'the client sent no approval');
  return sent.at(-1).body;
}

/** `messages` with the approval `id` answered as the client would send it. */
export function answered(messages, id, approved, newId = id) {
  const copy = json(messages);
  let found = false;
  for (const message of copy) {
    for (const part of message.parts) {
      if (part.state === 'approval-requested' && part.approval?.id === id) {
        part.state = 'approval-responded';
        part.approval = { id: newId, approved };
        found = true;
      }
    }
  }
  assert.ok(found, `no approval ${id} to answer`);
  return copy;
}
