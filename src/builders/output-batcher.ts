/**
 * Groups a command's output lines into conversation messages: one message per 250 ms or per
 * 50 lines, lines cut at 1000 characters, and at most `maxLines` lines per workflow (then a
 * single note that the rest was dropped), so a chatty command cannot flood the store.
 */
export interface OutputBatcherOptions {
  maxLines: number;
  linesPerMessage?: number;
  intervalMs?: number;
  maxLineLength?: number;
}

/** Batches output lines into messages (limits above); `flush` emits what is pending at once. */
export class OutputBatcher {
  private lines: string[] = [];
  private total = 0;
  private dropped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: OutputBatcherOptions,
  ) {}

  push(line: string): void {
    if (this.total >= this.options.maxLines) {
      if (!this.dropped) {
        this.dropped = true;
        this.flush();
        this.emit(`[output truncated: more than ${this.options.maxLines} lines]`);
      }
      return;
    }
    this.total++;
    const max = this.options.maxLineLength ?? 1000;
    this.lines.push(line.length > max ? `${line.slice(0, max)}…` : line);
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
}
