// The HTTP side of a model call (SPEC §8.2): a fetch for the AI SDK providers
// that retries rate limits (429), 408, 409, 5xx and failed connections up to
// `retries` times, with exponential backoff and jitter (1 s doubling to 60 s)
// unless the server says when to come back (`retry-after-ms`, `retry-after`
// in seconds or as an HTTP date). Other 4xx are returned as they are. Each
// retry is counted on the sample that made the call, so the record can say
// how many attempts its model calls took: generateText sends the sample's
// number in the SAMPLE_HEADER request header, which is taken off here before
// the request leaves. (An AsyncLocalStorage would do the same, but its promise
// hooks cost every sample ~8% of a worker's time.) The providers' own retries
// are off (maxRetries: 0): this is the only policy.

export const SAMPLE_HEADER = "x-trunchbull-sample";

const BASE_MS = 1000;
const CAP_MS = 60_000;

export function retryable(status) {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function serverDelayMs(headers, now = Date.now()) {
  if (!headers) return null;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return null;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function backoffMs(attempt, random = Math.random) {
  const ceiling = Math.min(CAP_MS, BASE_MS * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2); // "equal jitter": at least half the step
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// The sample number of a request, removed from its headers.
function takeSample(init) {
  const headers = init?.headers;
  if (!headers) return null;
  if (typeof headers.get === "function") {
    const value = headers.get(SAMPLE_HEADER);
    headers.delete(SAMPLE_HEADER);
    return value;
  }
  const key = Object.keys(headers).find((name) => name.toLowerCase() === SAMPLE_HEADER);
  if (key === undefined) return null;
  const value = headers[key];
  init.headers = { ...headers };
  delete init.headers[key];
  return value;
}

// samples: the sample number → { retries } of the samples in progress;
// onAttempt(k): each request sent for sample k (the parent counts them, so
// that a sample re-sent after its worker was replaced is charged for them).
export function retryingFetch(retries, samples, baseFetch = globalThis.fetch, onAttempt = () => {}) {
  return async function fetchWithRetries(url, init) {
    const k = Number(takeSample(init));
    const sample = samples.get(k);
    const signal = init?.signal;
    for (let attempt = 0; ; attempt++) {
      let response = null;
      let failure = null;
      if (sample) onAttempt(k);
      try {
        response = await baseFetch(url, init);
      } catch (err) {
        if (signal?.aborted || err?.trunchbullKind === "response-too-large") throw err; // sent again, it is as large
        failure = err;
      }
      if (attempt >= retries || (response !== null && !retryable(response.status))) {
        if (failure) throw failure;
        return response;
      }
      const wait = serverDelayMs(response?.headers) ?? backoffMs(attempt);
      if (response?.body) await response.body.cancel().catch(() => {});
      if (sample) sample.retries += 1;
      await sleep(wait, signal);
    }
  };
}
