// Newline-delimited lines read from a stream of Buffer chunks, in time linear
// in their size (a line's chunks are joined once, when its newline arrives),
// and at most `maxBytes` held for one line: a longer line is not buffered.
// Its first HEAD_BYTES go to `onTooLong(head, seen)` (`seen`: bytes read of it
// so far), and the rest of it is skipped up to its newline. UTF-8 is split on
// 0x0A only, which never occurs inside a multi-byte character.
const HEAD_BYTES = 256;
const NEWLINE = 10;

export class LineReader {
  constructor(maxBytes, onLine, onTooLong = () => {}) {
    this.maxBytes = maxBytes;
    this.onLine = onLine;
    this.onTooLong = onTooLong;
    this.parts = [];
    this.size = 0;
    this.skipping = false;
  }

  push(chunk) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.skipping && end > start) this._add(chunk.subarray(start, end));
      if (newline === -1) return;
      if (!this.skipping && this.size > 0) {
        const line = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
        this.parts = [];
        this.size = 0;
        this.onLine(line.toString("utf8"));
      }
      this.skipping = false;
      start = newline + 1;
    }
  }

  _add(piece) {
    if (this.size + piece.length <= this.maxBytes) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    const head = [];
    let headSize = 0;
    for (const part of [...this.parts, piece]) {
      if (headSize >= HEAD_BYTES) break;
      head.push(part.subarray(0, HEAD_BYTES - headSize));
      headSize += head[head.length - 1].length;
    }
    const seen = this.size + piece.length;
    this.parts = [];
    this.size = 0;
    this.skipping = true;
    this.onTooLong(Buffer.concat(head).toString("utf8"), seen);
  }
}
