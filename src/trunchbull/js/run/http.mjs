// The transport of the model calls: a `fetch` for the AI SDK providers over
// node:http / node:https with keep-alive agents. The providers only need a
// request with a string or byte body and a whole response back, and Node's
// built-in fetch (undici, web streams) costs about twice the CPU per request
// of node:http on the same connection (bench/README.md, "server"): on a busy
// client that CPU, not the model's latency, bounds the throughput. Anything
// this does not handle (a streamed or form body, a Request object, a scheme
// other than http/https) goes to the built-in fetch unchanged.
//
// What it keeps of fetch's contract: the signal aborts the request and the
// call rejects with the signal's reason; a failed connection rejects with
// `TypeError("fetch failed", { cause })`, as undici does (the AI SDK reads
// that as "cannot connect", a retryable error); redirects are followed (at
// most 20; 303, and 301/302 after a POST, become a GET without a body); a
// gzip, deflate or br response body is decoded. The response is a `Reply`
// (below) over the bytes already read, not a Response: what the providers use
// of one (status, ok, statusText, headers, the body read through a reader or
// as text/JSON/bytes, clone) at ~12% less of a worker's CPU per sample.
//
// A reply is bounded: a body (after decoding) past `limit` bytes ends the
// request there, while it is read (a compressed body is inflated as it
// arrives, so a gzip bomb costs at most `limit` bytes), with a
// ResponseTooLargeError (error kind `response-too-large`); a connection that
// fails (refused, reset, cut off mid-body) rejects with the TypeError above
// whose cause says `connection`.
import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";

// captured when the worker starts, before any user code (a tool) runs
const { Blob, Headers, Response, TextDecoder, URL } = globalThis;
const parseJson = JSON.parse;
const builtinFetch = globalThis.fetch;
const AGENTS = {
  "http:": new http.Agent({ keepAlive: true }),
  "https:": new https.Agent({ keepAlive: true }),
};
const MODULES = { "http:": http, "https:": https };
const NULL_BODY = new Set([204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
const DECODED_CHUNK = 64 * 1024; // zlib's output per 'data' event (its default, 16 KiB, costs 4x the events)
const DECODERS = {
  gzip: () => zlib.createGunzip({ chunkSize: DECODED_CHUNK }),
  "x-gzip": () => zlib.createGunzip({ chunkSize: DECODED_CHUNK }),
  deflate: () => zlib.createInflate({ chunkSize: DECODED_CHUNK }),
  br: () => zlib.createBrotliDecompress({ chunkSize: DECODED_CHUNK }),
};
export const DEFAULT_REPLY_LIMIT = 16 << 20;

// A compressed body that expands more than this many times what has arrived,
// once past EXPANSION_FLOOR decoded bytes, is a bomb, not a reply: JSON
// replies compress 3-20x, and inflating to the limit costs ~50 ms of CPU.
const MAX_EXPANSION = 100;
const EXPANSION_FLOOR = 1 << 20;

export class ResponseTooLargeError extends Error {
  constructor(limit, url, why = null) {
    super(why ?? `the reply of ${url.origin} was larger than ${limit.toLocaleString("en")} bytes (the run's limit on one reply); it was not read further`);
    this.name = "ResponseTooLargeError";
    this.trunchbullKind = "response-too-large";
  }
}

function failed(err) {
  if (err && typeof err === "object") err.trunchbullKind ??= "connection";
  return new TypeError("fetch failed", { cause: err });
}

// A plain object of the request's headers, without the unset ones (the
// providers leave a header `undefined` when an option is not given).
function headerObject(headers) {
  const out = {};
  if (!headers) return out;
  const entries =
    typeof headers.forEach === "function" && typeof headers.get === "function"
      ? [...headers.entries()]
      : Array.isArray(headers)
        ? headers
        : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined && value !== null) out[name] = String(value);
  return out;
}

function bodyBytes(body) {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined; // not ours to send
}

function hasHeader(headers, name) {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function dropHeader(headers, name) {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) delete headers[key];
}

// One exchange, no redirects: resolves { status, statusText, rawHeaders,
// body } with the body decoded (`decode`: false for a redirect or a body the
// caller drops), or rejects once the body passes `limit` bytes.
function exchange(url, method, headers, body, signal, limit) {
  return new Promise((resolve, reject) => {
    const request = MODULES[url.protocol].request(url, { method, headers, agent: AGENTS[url.protocol] });
    let settled = false;
    const onAbort = () => {
      request.destroy();
      settle(reject, signal.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      fn(value);
    };
    const fail = (err) => settle(reject, signal?.aborted ? signal.reason : failed(err));
    request.on("error", fail);
    request.on("response", (response) => {
      const { statusCode, rawHeaders } = response;
      const declared = Number(rawHeader(rawHeaders, "content-length"));
      const tooLarge = (why) => {
        request.destroy();
        settle(reject, new ResponseTooLargeError(limit, url, why));
      };
      if (declared > limit) return tooLarge();
      const encoding = rawHeader(rawHeaders, "content-encoding")?.trim().toLowerCase();
      const plain = !encoding || encoding === "identity" || NULL_BODY.has(statusCode) || method === "HEAD";
      if (!plain && !DECODERS[encoding]) {
        request.destroy();
        return fail(new Error(`unsupported content-encoding ${encoding}`));
      }
      const chunks = [];
      let size = 0;
      const collect = (chunk) => {
        size += chunk.length;
        if (size > limit) tooLarge();
        else chunks.push(chunk);
      };
      const done = () =>
        settle(resolve, {
          status: statusCode,
          statusText: response.statusMessage ?? "",
          rawHeaders,
          body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
        });
      response.on("error", fail);
      response.on("aborted", () => fail(Object.assign(new Error("the connection closed before the reply's end"), { code: "ECONNRESET" })));
      if (plain) {
        response.on("data", collect);
        response.on("end", done);
        return;
      }
      // decoded as it arrives: what counts against the limit is what it expands to
      const decoder = DECODERS[encoding]();
      let received = 0;
      response.on("data", (chunk) => {
        received += chunk.length;
        if (received > limit) tooLarge();
        if (settled) decoder.destroy();
        else decoder.write(chunk);
      });
      response.on("end", () => {
        if (received === 0) {
          decoder.destroy();
          done(); // an empty body, encoded or not
        } else decoder.end();
      });
      decoder.on("data", (chunk) => {
        if (!settled) collect(chunk);
        const consumed = decoder.bytesWritten; // compressed bytes the decoder has used so far
        if (!settled && size > EXPANSION_FLOOR && size > MAX_EXPANSION * consumed) {
          tooLarge(`the ${encoding} reply of ${url.origin} expanded more than ${MAX_EXPANSION} times (${consumed.toLocaleString("en")} bytes to ${size.toLocaleString("en")} so far): a compression bomb, not read further`);
        }
        if (settled) decoder.destroy();
      });
      decoder.on("error", (err) => fail(new Error(`the ${encoding} body cannot be decoded: ${err.message}`)));
      decoder.on("end", done);
    });
    request.end(body ?? undefined);
  });
}

// The value of a response header (node:http's [name, value, ...] list); null when absent.
function rawHeader(rawHeaders, name) {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === name) return rawHeaders[i + 1];
  }
  return null;
}

function responseHeaders(rawHeaders) {
  const headers = new Headers();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    // the body handed on is decoded, so its encoding and length no longer apply
    if (name === "content-encoding" || name === "content-length") continue;
    headers.append(rawHeaders[i], rawHeaders[i + 1]);
  }
  return headers;
}

// A whole response body, read the way the providers read one: a reader that
// gives it in one chunk. Any other use of the stream (pipeThrough, tee, async
// iteration) gets a real ReadableStream of the same bytes. As with a web
// stream, a body that is read or cancelled is "disturbed" (its response's
// bodyUsed), and one with a reader is locked.
class BytesReader {
  #body;
  constructor(body) {
    this.#body = body;
  }
  async read() {
    const value = this.#body.take();
    return value === null ? { done: true, value: undefined } : { done: false, value };
  }
  async cancel() {
    this.#body.take();
  }
  releaseLock() {}
  get closed() {
    return Promise.resolve(undefined);
  }
}

class BytesBody {
  #bytes;
  #stream = null;
  locked = false;
  disturbed = false;
  constructor(bytes) {
    this.#bytes = bytes;
  }
  take() {
    const bytes = this.#bytes;
    this.#bytes = null;
    this.disturbed = true;
    return bytes;
  }
  getReader(options) {
    if (this.locked) throw new TypeError("ReadableStream is locked");
    if (options?.mode === "byob") return this.#real().getReader(options);
    this.locked = true;
    return new BytesReader(this);
  }
  async cancel() {
    if (this.locked) throw new TypeError("ReadableStream is locked");
    this.take();
  }
  #real() {
    if (this.#stream === null) {
      this.#stream = new Response(this.#bytes).body;
      this.locked = this.disturbed = true; // from now on the real stream says
    }
    return this.#stream;
  }
  pipeThrough(...args) {
    return this.#real().pipeThrough(...args);
  }
  pipeTo(...args) {
    return this.#real().pipeTo(...args);
  }
  tee() {
    return this.#real().tee();
  }
  [Symbol.asyncIterator]() {
    return this.#real()[Symbol.asyncIterator]();
  }
}

// The response handed to the providers: a Response's fields and body
// methods over bytes already read. Building and reading Node's Response (its
// web stream, its WebIDL checks) took ~12% of a worker's CPU on the bench's
// server workload (6,000 samples: 13.5–15.8 s against 15.4–17.5 s).
class Reply {
  #bytes;
  #body = null;
  #used = false;
  type = "basic";
  constructor(bytes, status, statusText, headers, url, redirected) {
    this.#bytes = bytes;
    this.status = status;
    this.statusText = statusText;
    this.headers = headers;
    this.url = url;
    this.redirected = redirected;
  }
  get ok() {
    return this.status >= 200 && this.status < 300;
  }
  get body() {
    if (this.#bytes === null) return null;
    this.#body ??= new BytesBody(this.#bytes);
    return this.#body;
  }
  get bodyUsed() {
    return this.#used || this.#body?.disturbed === true;
  }
  get #unusable() {
    return this.bodyUsed || this.#body?.locked === true;
  }
  #take() {
    if (this.#unusable) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#bytes ?? new Uint8Array(0);
  }
  async arrayBuffer() {
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }
  async bytes() {
    return new Uint8Array(await this.arrayBuffer());
  }
  async text() {
    return new TextDecoder().decode(this.#take());
  }
  async json() {
    return parseJson(await this.text());
  }
  async blob() {
    return new Blob([this.#take()], { type: this.headers.get("content-type") ?? "" });
  }
  clone() {
    if (this.#unusable) throw new TypeError("Response.clone: Body has already been consumed.");
    return new Reply(this.#bytes, this.status, this.statusText, new Headers(this.headers), this.url, this.redirected);
  }
}

export async function httpFetch(input, init = {}, fallback = builtinFetch, limit = DEFAULT_REPLY_LIMIT) {
  let url = typeof input === "string" ? URL.parse(input) : input instanceof URL ? input : null;
  let body = bodyBytes(init.body);
  if (url === null || !(url.protocol in MODULES) || body === undefined) return fallback(input, init);
  const signal = init.signal ?? null;
  if (signal?.aborted) throw signal.reason;
  let method = (init.method ?? "GET").toUpperCase();
  const headers = headerObject(init.headers);
  for (let redirects = 0; ; redirects++) {
    dropHeader(headers, "content-length"); // the length of what is sent, under one name
    if (body !== null) headers["content-length"] = String(body.byteLength);
    if (!hasHeader(headers, "accept")) headers.accept = "*/*";
    const reply = await exchange(url, method, headers, body, signal, limit);
    const location = REDIRECT.has(reply.status) && init.redirect !== "manual" ? rawHeader(reply.rawHeaders, "location") : null;
    if (location !== null) {
      if (init.redirect === "error" || redirects >= MAX_REDIRECTS) {
        throw new TypeError("fetch failed", { cause: new Error(`redirect ${reply.status} not followed`) });
      }
      if (reply.status === 303 || ((reply.status === 301 || reply.status === 302) && method === "POST")) {
        method = "GET";
        body = null;
        dropHeader(headers, "content-type");
      }
      const next = new URL(location, url);
      if (next.origin !== url.origin) dropHeader(headers, "authorization");
      url = next;
      continue;
    }
    const payload = NULL_BODY.has(reply.status) || method === "HEAD" ? null : reply.body;
    return new Reply(payload, reply.status, reply.statusText, responseHeaders(reply.rawHeaders), url.href, redirects > 0);
  }
}
