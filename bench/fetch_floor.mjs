// The floor of the server workload (bench/run.py): the same chat-completions
// requests with the pinned Node's bare fetch, CONCURRENCY lanes, no SDK, no
// records. Prints the number of replies read.
//   node bench/fetch_floor.mjs BASE_URL MODEL CONCURRENCY < prompts (one JSON string per line)
import { readFileSync } from "node:fs";

const [baseUrl, model, concurrency] = process.argv.slice(2);
const prompts = readFileSync(0, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
let next = 0;
let replies = 0;
async function lane() {
  while (next < prompts.length) {
    const prompt = prompts[next++];
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }] }),
    });
    const body = await response.json();
    if (typeof body?.choices?.[0]?.message?.content === "string") replies += 1;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, lane));
console.log(replies);
