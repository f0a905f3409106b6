// A base URL's query string (an API version a gateway asks for) belongs
// after the path a provider adds to the base URL: `${baseURL}/chat/completions`
// would put it in the middle (`/v1?api-version=1/chat/completions`). The
// provider is given the URL without it, and its fetch adds it to every
// request (after the provider's own query, if any). The Python side
// (run/base_url.py) has checked that it holds no credential.

export function splitBaseUrl(baseUrl) {
  if (typeof baseUrl !== "string") return { baseURL: baseUrl, query: "" };
  const at = baseUrl.indexOf("?");
  return at < 0 ? { baseURL: baseUrl, query: "" } : { baseURL: baseUrl.slice(0, at), query: baseUrl.slice(at + 1) };
}

export function withQuery(fetch, query) {
  if (!query) return fetch;
  return function fetchWithQuery(input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : null;
    if (url === null) return fetch(input, init);
    const hash = url.indexOf("#");
    const [head, tail] = hash < 0 ? [url, ""] : [url.slice(0, hash), url.slice(hash)];
    return fetch(`${head}${head.includes("?") ? "&" : "?"}${query}${tail}`, init);
  };
}
