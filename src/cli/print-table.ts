/**
 * The plain-text tables of the listing commands (`token list`, `user list`; docs/cli.md#command-line).
 */

/**
 * Writes `header` and `rows` to stdout as columns padded to their widest cell, two spaces apart,
 * without trailing blanks. Every row has one cell per header cell.
 */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n`);
}
