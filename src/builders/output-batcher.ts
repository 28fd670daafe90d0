/**
 * Groups a builder's output lines into conversation messages: one message per 250 ms or per
 * 50 lines, lines cut at 1000 characters (code points), and at most `maxLines` lines per workflow,
 * directives included (then a single note that the rest was dropped), so a chatty or hostile
 * command cannot flood the store.
 */
export interface OutputBatcherOptions {
  maxLines: number;
  linesPerMessage?: number;
  intervalMs?: number;
  /** Longest line kept, in code points (default 1000). */
  maxLineLength?: number;
}

/** Batches output lines into messages (limits above); `flush` emits what is pending at once. */
export class OutputBatcher {
  private lines: string[] = [];
  private total = 0;
  private dropped = false;
  private droppedBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: OutputBatcherOptions,
  ) {}

  /**
   * Counts one line against the workflow's cap without keeping it (for directives).
   * @returns false when the cap is reached (the line must be ignored).
   */
  count(): boolean {
    if (this.total >= this.options.maxLines) {
      this.noteDropped();
      return false;
    }
    this.total++;
    return true;
  }

  /**
   * Adds an output line. `droppedBytes` says how much of it the line reader already cut off.
   */
  push(line: string, droppedBytes = 0): void {
    if (!this.count()) return;
    this.droppedBytes += droppedBytes;
    const max = this.options.maxLineLength ?? 1000;
    // Code points, so a cut never splits a surrogate pair.
    let text = line;
    if (line.length > max) {
      const points = Array.from(line);
      if (points.length > max) text = `${points.slice(0, max).join('')}…`;
    } else if (droppedBytes > 0) text = `${line}…`;
    this.lines.push(text);
    if (this.lines.length >= (this.options.linesPerMessage ?? 50)) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.intervalMs ?? 250);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const text = this.lines.join('\n');
    this.lines = [];
    this.emit(text);
  }

  /** Emits what is pending and, when long lines were cut, how many bytes were dropped. */
  close(): void {
    this.flush();
    if (this.droppedBytes > 0) this.emit(`[output: ${this.droppedBytes} bytes of over-long lines dropped]`);
    this.droppedBytes = 0;
  }

  private noteDropped(): void {
    if (this.dropped) return;
    this.dropped = true;
    this.flush();
    this.emit(`[output truncated: more than ${this.options.maxLines} lines]`);
  }
}
