// The peer of `cargo xtask bench --peer`: the Vercel AI SDK's own way of serving a chat,
// `streamText` + `pipeUIMessageStreamToResponse` on node:http, with a mock model that
// streams what datban's offline model streams for "Thời tiết Hà Nội hôm nay thế nào?":
// a sentence, one getWeather call (its arguments in 8 deltas), then the forecast in words.
// Like the measurement, it persists nothing.
//
// PEER_ADDR (host:port) is where it listens; PEER_CHUNK_DELAY_MS pauses before every
// model chunk, as DATBAN_OFFLINE_TOKEN_DELAY_MS does before every offline-model event.

import http from 'node:http';
import { stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { z } from 'zod';

const addr = process.env.PEER_ADDR ?? '127.0.0.1:3100';
const colon = addr.lastIndexOf(':');
const host = addr.slice(0, colon);
const port = Number(addr.slice(colon + 1));
const delayMs = Number(process.env.PEER_CHUNK_DELAY_MS ?? '0');
// null skips the timer altogether, as datban's offline model skips its sleep at 0 ms.
const chunkDelay = delayMs > 0 ? delayMs : null;
const MAX_BODY_BYTES = 64 * 1024;
const ARGUMENT_DELTAS = 8;

// datban's offline model streams text in pieces of 2, 1, 3, 2, 1, 3… words, each with
// the whitespace after it (`text_pieces` in server/src/model/offline.rs).
function textPieces(text) {
  const words = text.match(/\S+\s*/g) ?? [];
  const sizes = [2, 1, 3];
  const pieces = [];
  for (let i = 0, round = 0; i < words.length; round++) {
    const take = sizes[round % sizes.length];
    pieces.push(words.slice(i, i + take).join(''));
    i += take;
  }
  return pieces;
}

// Splits `text` into `count` pieces of about equal length, never inside a character.
function evenPieces(text, count) {
  const chars = Array.from(text);
  const pieces = [];
  for (let i = 0; i < count; i++) {
    const start = Math.floor((chars.length * i) / count);
    const end = Math.floor((chars.length * (i + 1)) / count);
    pieces.push(chars.slice(start, end).join(''));
  }
  return pieces.filter((piece) => piece.length > 0);
}

const usage = {
  inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: undefined },
};

function textParts(id, text) {
  return [
    { type: 'text-start', id },
    ...textPieces(text).map((delta) => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
  ];
}

function firstStep() {
  const id = 'call_1_0';
  const input = JSON.stringify({ city: 'Hà Nội', days: 1 });
  return [
    { type: 'stream-start', warnings: [] },
    ...textParts('t1', 'Để tôi xem thời tiết ở Hà Nội…'),
    { type: 'tool-input-start', id, toolName: 'getWeather' },
    ...evenPieces(input, ARGUMENT_DELTAS).map((delta) => ({ type: 'tool-input-delta', id, delta })),
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: 'getWeather', input },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
  ];
}

const CONDITIONS = { 'partly-cloudy': 'ít mây', sunny: 'nắng', rain: 'mưa' };

function secondStep(prompt) {
  const result = prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content)
    .find((part) => part.type === 'tool-result');
  const forecast = result?.output?.value;
  const days = (forecast?.days ?? []).map((day) => {
    const [, month, date] = day.date.split('-');
    return `${date}/${month} ${CONDITIONS[day.condition] ?? day.condition}, ${day.tempMinC}–${day.tempMaxC}°C, khả năng mưa ${day.precipitationChance}%`;
  });
  return [
    { type: 'stream-start', warnings: [] },
    ...textParts('t2', `Thời tiết ${forecast?.city ?? 'Hà Nội'}: ${days.join('; ')}.`),
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

// One mock per request: a shared one would keep every call it was given.
function mockModel() {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const answered = prompt.some((message) => message.role === 'tool');
      return {
        stream: simulateReadableStream({
          chunks: answered ? secondStep(prompt) : firstStep(),
          initialDelayInMs: chunkDelay,
          chunkDelayInMs: chunkDelay,
        }),
      };
    },
  });
}

const getWeather = tool({
  description: 'The weather forecast for a Vietnamese city.',
  inputSchema: z.object({ city: z.string(), days: z.number().int().min(1).max(7).optional() }),
  execute: async ({ city, days = 1 }) => ({
    city,
    days: Array.from({ length: days }, (_, i) => ({
      condition: 'partly-cloudy',
      date: new Date(Date.now() + i * 86_400_000).toISOString().slice(0, 10),
      precipitationChance: 30,
      tempMaxC: 21,
      tempMinC: 17,
    })),
  }),
});

function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function chat(req, res) {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      sendJson(res, 413, { error: { code: 'BODY_TOO_LARGE', message: 'too large' } });
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    let text;
    try {
      text = JSON.parse(Buffer.concat(chunks).toString('utf8')).text;
    } catch {
      text = undefined;
    }
    if (typeof text !== 'string' || text.length === 0) {
      sendJson(res, 400, { error: { code: 'BAD_REQUEST', message: 'text is required' } });
      return;
    }
    const result = streamText({
      model: mockModel(),
      messages: [{ role: 'user', content: text }],
      tools: { getWeather },
      stopWhen: stepCountIs(2),
    });
    result.pipeUIMessageStreamToResponse(res);
  });
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    sendJson(res, 200, { status: 'ok' });
  } else if (req.method === 'POST' && req.url === '/api/chat') {
    chat(req, res);
  } else {
    sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'not found' } });
  }
});
// The load generator keeps its connections between runs, as browsers do.
server.keepAliveTimeout = 60_000;
server.listen(port, host, () => {
  console.log(`peer listening on http://${host}:${port}`);
});
