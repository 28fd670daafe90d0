/**
 * Splits a byte stream into lines without ever holding more than one line's allowance in memory.
 * A line longer than the allowance is cut while it is read: its first `maxLineBytes` bytes are
 * kept, the rest is counted and dropped up to the next newline. Used for builder output (one huge
 * line must not crash or bloat the server) and for stdio framing (an oversized message is refused
 * without being buffered whole).
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** What `readBoundedLines` reports for each line. */
export interface BoundedLine {
  /** The line as UTF-8 text, without its `\n` (or `\r\n`); only the kept head when cut. */
  text: string;
  /** Bytes of this line that were dropped (0 when the line fit). */
  droppedBytes: number;
}

/** Limits and the receiver of `readBoundedLines`. */
export interface BoundedLinesOptions {
  /** Bytes of one line kept in memory; the rest of a longer line is dropped and counted. */
  maxLineBytes: number;
  /** Called for every line, in order. */
  onLine(line: BoundedLine): void;
}

const NEWLINE = 0x0a;

/**
 * Reads `stream` to its end, calling `onLine` per line (a last line without a newline included).
 * @returns a promise that settles when the stream has ended or closed (never rejects: a stream
 *   error ends the reading like an end of input).
 */
export function readBoundedLines(stream: Readable, options: BoundedLinesOptions): Promise<void> {
  const max = Math.max(1, options.maxLineBytes);
  let parts: Buffer[] = [];
  let kept = 0;
  let dropped = 0;

  const emit = () => {
    let buffer = parts.length === 1 ? parts[0]! : Buffer.concat(parts, kept);
    if (dropped === 0 && buffer.length > 0 && buffer[buffer.length - 1] === 0x0d)
      buffer = buffer.subarray(0, buffer.length - 1);
    // A cut can fall inside a multi-byte character: decode what is whole, drop the partial tail.
    const decoder = new StringDecoder('utf8');
    const text = decoder.write(buffer);
    parts = [];
    kept = 0;
    const droppedBytes = dropped;
    dropped = 0;
    options.onLine({ text, droppedBytes });
  };

  const take = (segment: Buffer) => {
    if (segment.length === 0) return;
    const room = max - kept;
    if (room <= 0) {
      dropped += segment.length;
      return;
    }
    if (segment.length <= room) {
      parts.push(segment);
      kept += segment.length;
      return;
    }
    // Copy the head: a view would pin the whole (possibly huge) chunk in memory.
    parts.push(Buffer.from(segment.subarray(0, room)));
    kept += room;
    dropped += segment.length - room;
  };

  return new Promise((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (kept > 0 || dropped > 0) emit();
      resolve();
    };
    stream.on('data', (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let start = 0;
      for (;;) {
        const end = bytes.indexOf(NEWLINE, start);
        if (end === -1) {
          take(start === 0 ? bytes : bytes.subarray(start));
          return;
        }
        take(bytes.subarray(start, end));
        emit();
        start = end + 1;
      }
    });
    stream.once('end', finish);
    stream.once('close', finish);
    stream.once('error', finish);
  });
}
