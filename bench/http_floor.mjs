// The floor of the server workload (bench/run.py): the same chat-completions
// requests over node:http with a keep-alive agent (the transport the run
// workers use, js/run_http.mjs), CONCURRENCY lanes, no SDK, no records. Prints
// the number of replies read.
//   node bench/http_floor.mjs BASE_URL MODEL CONCURRENCY < prompts (one JSON string per line)
import http from "node:http";
import { readFileSync } from "node:fs";

const [baseUrl, model, concurrency] = process.argv.slice(2);
const url = new URL(`${baseUrl}/chat/completions`);
const agent = new http.Agent({ keepAlive: true });
const prompts = readFileSync(0, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));

function post(body) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    request.end(body);
  });
}

let next = 0;
let replies = 0;
async function lane() {
  while (next < prompts.length) {
    const prompt = prompts[next++];
    const body = JSON.parse(await post(JSON.stringify({ model, messages: [{ role: "user", content: prompt }] })));
    if (typeof body?.choices?.[0]?.message?.content === "string") replies += 1;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, lane));
console.log(replies);
