/**
 * A command line the program refuses as a whole before doing anything: a setting of the wrong
 * kind (`--database-url mysql://…`) or settings that contradict each other (`serve --role worker
 * --http`). The bin prints its message on stderr and exits with code 2, the shell's code for bad
 * usage (a value out of range, caught by commander, keeps exit code 1).
 */
export class UsageError extends Error {
  /** The process's exit code. */
  readonly exitCode = 2;

  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
