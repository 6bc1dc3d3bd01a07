/**
 * Turns a byte stream into text lines, in real time and with bounded memory.
 *
 * Rules (the same whatever the chunking of the input; a property test checks it):
 * - A line ends at `\n`; one trailing `\r` is stripped (CRLF).
 * - A line longer than `maxLineBytes` bytes is emitted as several lines of at
 *   most `maxLineBytes` bytes each. A cut never falls inside a UTF-8 sequence:
 *   it moves back (at most 3 bytes) to the start of the sequence.
 * - Bytes are decoded as UTF-8; invalid sequences become U+FFFD, never an error.
 * - NUL bytes become U+FFFD too: binary output is not preserved anyway, and a
 *   NUL inside text breaks C-string consumers (SQLite functions, terminals).
 * - `end()` flushes a final line that has no `\n` (if any bytes are pending).
 *
 * Memory: at most `maxLineBytes + 1` bytes plus one incoming chunk are held.
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;

export interface LineSplitter {
  push(chunk: Buffer): void;
  end(): void;
}

export function createLineSplitter(
  emit: (line: string) => void,
  maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): LineSplitter {
  if (!Number.isInteger(maxLineBytes) || maxLineBytes < 4) {
    // 4 bytes: the longest UTF-8 sequence must fit in one piece.
    throw new Error(`maxLineBytes must be an integer >= 4, got ${maxLineBytes}`);
  }
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  const emitText = (bytes: Buffer): void => {
    const text = bytes.toString("utf8");
    emit(text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text);
  };

  /** Emit a complete line (its `\n` already removed): strip `\r`, split if long. */
  const emitLine = (bytes: Buffer): void => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    let start = 0;
    while (end - start > maxLineBytes) {
      const cut = cutPoint(bytes, start, maxLineBytes);
      emitText(bytes.subarray(start, cut));
      start = cut;
    }
    emitText(bytes.subarray(start, end));
  };

  /**
   * Emit full pieces of an unfinished line once it is too long. One byte more
   * than the limit is kept back so that a `\r` right before a later `\n` is
   * never emitted as part of a piece (that would differ from emitLine).
   */
  const trimPending = (): void => {
    if (pendingBytes <= maxLineBytes + 1) return;
    let buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    let start = 0;
    while (buf.length - start > maxLineBytes + 1) {
      const cut = cutPoint(buf, start, maxLineBytes);
      emitText(buf.subarray(start, cut));
      start = cut;
    }
    // Copy the rest so the (possibly large) concatenated buffer can be freed.
    buf = Buffer.from(buf.subarray(start));
    pending = [buf];
    pendingBytes = buf.length;
  };

  return {
    push(chunk: Buffer): void {
      let pos = 0;
      for (;;) {
        const nl = chunk.indexOf(LF, pos);
        if (nl === -1) break;
        const part = chunk.subarray(pos, nl);
        if (pendingBytes === 0) {
          emitLine(part);
        } else {
          pending.push(part);
          emitLine(Buffer.concat(pending, pendingBytes + part.length));
          pending = [];
          pendingBytes = 0;
        }
        pos = nl + 1;
      }
      if (pos < chunk.length) {
        // Copy: the caller may reuse its buffer, and a small slice must not pin a big chunk.
        const rest = Buffer.from(chunk.subarray(pos));
        pending.push(rest);
        pendingBytes += rest.length;
        trimPending();
      }
    },
    end(): void {
      if (pendingBytes === 0) return;
      const buf = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      emitLine(buf);
    },
  };
}

/**
 * Where to cut `buf` so the piece starting at `start` has at most `max` bytes
 * and the next piece does not start with a UTF-8 continuation byte (unless the
 * data is not valid UTF-8 there, in which case the cut is at exactly `max`).
 */
function cutPoint(buf: Buffer, start: number, max: number): number {
  const limit = start + max;
  for (let cut = limit; cut > limit - 4 && cut > start; cut--) {
    if ((buf[cut]! & 0xc0) !== 0x80) return cut;
  }
  return limit;
}
