/**
 * Reads the first line of a stdio start's input before the stdio transport exists (docs/performance.md
 * "Start-up time"): the early start answers it if it can, and hands the transport a stream that
 * carries everything after it, in order, nothing dropped.
 */
import { PassThrough, type Readable } from 'node:stream';

/** What `readFirstLine` found. */
export interface FirstLine {
  /** The first line as UTF-8 text, without its `\n` (or `\r\n`), when it was taken. */
  taken: string | undefined;
  /**
   * The input from the byte after the taken line's newline to its end; when no line was taken,
   * the whole input from its first byte. Ends when the input ends.
   */
  rest: Readable;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Reads `input` until its first newline, its end, or `maxBytes` bytes without a newline
 * (whichever comes first), and offers the line, if one came, to `take`.
 * @param take called with the first line; true takes it out of the input (`rest` starts after it).
 * @returns the taken line and the rest of the input; never rejects (an input error ends the rest
 *   as an end of input does).
 */
export function readFirstLine(input: Readable, maxBytes: number, take: (line: string) => boolean): Promise<FirstLine> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const rest = new PassThrough();
    const finish = (lineEnd: number | undefined, ended: boolean) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onEnd);
      input.pause();
      const read = Buffer.concat(chunks, size);
      let taken: string | undefined;
      let after = read;
      if (lineEnd !== undefined) {
        const cut = lineEnd > 0 && read[lineEnd - 1] === CARRIAGE_RETURN ? lineEnd - 1 : lineEnd;
        const line = read.toString('utf8', 0, cut);
        if (take(line)) {
          taken = line;
          after = read.subarray(lineEnd + 1);
        }
      }
      if (after.length > 0) rest.write(after);
      if (ended) rest.end();
      else {
        input.pipe(rest);
        // A pipe passes on only `end`: an input that fails or closes without one ends the rest
        // too, as the end of input does (the transport then stops as it does at the end of input).
        const endRest = () => {
          if (!rest.writableEnded) rest.end();
        };
        input.once('error', endRest);
        input.once('close', endRest);
      }
      resolve({ taken, rest });
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const at = bytes.indexOf(NEWLINE);
      chunks.push(bytes);
      const before = size;
      size += bytes.length;
      if (at >= 0 && before + at <= maxBytes) finish(before + at, false);
      else if (at >= 0 || size > maxBytes) finish(undefined, false);
    };
    const onEnd = () => finish(undefined, true);
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onEnd);
  });
}
