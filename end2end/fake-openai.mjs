// A fake OpenAI-compatible Chat Completions server for the `@provider` Playwright pass.
//
//   FAKE_OPENAI_PORT=0 FAKE_OPENAI_KEY=fake-key node fake-openai.mjs
//
// Listens on 127.0.0.1:$FAKE_OPENAI_PORT (0 or unset: a free port) and prints one line,
// `listening <port>`, once it accepts connections. It answers
//   POST /v1/chat/completions  a streamed turn (SSE, the real chunk format), chosen by the
//                              last message: a booking request calls createBooking, a tool
//                              result is summarised, anything else gets a greeting;
//   GET  /requests             every request body received so far, as a JSON array;
//   GET  /calls                every tool call the fake issued ({id, name, arguments}).
// Everything else is a 404. With FAKE_OPENAI_KEY set, completions need
// `Authorization: Bearer $FAKE_OPENAI_KEY` (401 otherwise). No dependencies: Node 20.

import http from 'node:http';

const port = Number(process.env.FAKE_OPENAI_PORT ?? 0);
const key = process.env.FAKE_OPENAI_KEY ?? '';
const CHUNK_DELAY_MS = 5;
const ARGUMENT_PIECE = 6;

/** Every completion request body, in arrival order. */
const requests = [];
/** Every tool call this fake streamed, so a test can match the server's result to it. */
const calls = [];
let callCounter = 0;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tomorrow 19:00 on Vietnam's calendar (UTC+7 all year, no daylight saving). */
function tomorrowEveningInVietnam(now = new Date()) {
  const local = new Date(now.getTime() + 7 * 60 * 60 * 1000);
  local.setUTCDate(local.getUTCDate() + 1);
  const yyyy = String(local.getUTCFullYear()).padStart(4, '0');
  const mm = String(local.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(local.getUTCDate()).padStart(2, '0');
  return `${yyyy}-${mm}-${dd}T19:00:00+07:00`;
}

/** Splits a text into pieces of at most `size` characters (code points, not UTF-16 units). */
function pieces(text, size) {
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Text pieces at word boundaries, several per reply, as a model streams them. */
function textPieces(text) {
  return text.split(/(?<= )/).filter((piece) => piece.length > 0);
}

function messageText(message) {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

/** What to answer: `{ text, call? }`, from the last message of the request. */
function plan(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    let result = null;
    try {
      result = JSON.parse(messageText(last));
    } catch {
      result = null;
    }
    if (result?.ok === true && result.bookingId) {
      const where = result.restaurantName ?? result.restaurantId ?? 'nhà hàng';
      return { text: `Đã đặt bàn tại ${where}, mã ${result.bookingId}.` };
    }
    if (result?.ok === false) {
      return { text: `Chưa đặt được bàn: ${result.error?.message ?? 'lỗi không rõ'}` };
    }
    return { text: 'Đã nhận kết quả. (fake provider)' };
  }
  if (last?.role === 'user') {
    const text = messageText(last).normalize('NFC').toLowerCase();
    if (text.includes('đặt bàn') || text.includes('book')) {
      callCounter += 1;
      return {
        text: 'Tôi chuẩn bị yêu cầu đặt bàn, bạn xác nhận giúp nhé.',
        call: {
          id: `call_fake_${callCounter}`,
          name: 'createBooking',
          arguments: JSON.stringify({
            restaurantId: 'hn-cha-ca-thang-long',
            partySize: 2,
            startsAt: tomorrowEveningInVietnam(),
          }),
        },
      };
    }
  }
  return { text: 'Xin chào! (fake provider)' };
}

/** The chunks of one streamed turn, in the Chat Completions format. */
function chunks(model, { text, call }) {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices, extra = {}) => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    ...extra,
  });
  const delta = (d, finishReason = null) => chunk([{ index: 0, delta: d, finish_reason: finishReason }]);

  const out = [delta({ role: 'assistant', content: '' })];
  for (const piece of textPieces(text)) out.push(delta({ content: piece }));
  if (call) {
    out.push(
      delta({
        tool_calls: [
          { index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of pieces(call.arguments, ARGUMENT_PIECE)) {
      out.push(delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
  }
  out.push(delta({}, call ? 'tool_calls' : 'stop'));
  const completion = Array.from(text).length + (call ? call.arguments.length : 0);
  out.push(
    chunk([], { usage: { prompt_tokens: 100, completion_tokens: completion, total_tokens: 100 + completion } }),
  );
  return out;
}

function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

async function completions(req, res) {
  if (key && req.headers.authorization !== `Bearer ${key}`) {
    sendJson(res, 401, {
      error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
    });
    return;
  }
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch (error) {
    sendJson(res, 400, { error: { message: `malformed JSON body: ${error.message}`, type: 'invalid_request_error' } });
    return;
  }
  requests.push(body);
  const turn = plan(body);
  if (turn.call) calls.push(turn.call);
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  for (const chunk of chunks(typeof body.model === 'string' ? body.model : 'fake-model', turn)) {
    if (closed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    await sleep(CHUNK_DELAY_MS);
  }
  if (!closed) res.end('data: [DONE]\n\n');
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method === 'POST' && path === '/v1/chat/completions') {
    completions(req, res).catch((error) => {
      console.error('fake-openai:', error);
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  } else if (req.method === 'GET' && path === '/requests') {
    sendJson(res, 200, requests);
  } else if (req.method === 'GET' && path === '/calls') {
    sendJson(res, 200, calls);
  } else {
    sendJson(res, 404, { error: { message: `no route for ${req.method} ${path}` } });
  }
});

server.on('error', (error) => {
  console.error(`fake-openai: cannot listen on 127.0.0.1:${port}: ${error.message}`);
  process.exit(1);
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}
