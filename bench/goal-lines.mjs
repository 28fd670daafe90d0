// The performance goals' lines, as `npm run bench` (bench/all.mjs) prints them and as the
// benchmarks that check a goal of their own print theirs (bench/expo-bench.mjs): one line per
// goal with its number, what is measured, the figure (a ratio to its baseline measured in the same
// run, or a unit), the goal, and `ok` or `short`; a figure that was not measured says so.

/** Column widths of a goal line: number, what, figure, goal, verdict. */
const WIDTHS = [5, 66, 34, 14, 6];

/**
 * A list of goal lines: `goal(n, what, figure, limit, { atLeast, unit })` adds a goal's line
 * (`figure` at most `limit`, or at least with `atLeast`; `unit` 'x' for a ratio, else the unit
 * shown, e.g. 'ms'; an undefined figure is 'not measured'), `reported(what, value)` a figure with
 * no goal, `line(...cells)` a line as it is, and `print(title)` writes them all to stdout.
 */
export function goalLines() {
  const rows = [];
  const goal = (n, what, figure, limit, { atLeast = false, unit = 'x' } = {}) => {
    if (figure === undefined || figure === null) return rows.push([n, what, 'not measured', '', '']);
    const ok = atLeast ? figure >= limit : figure <= limit;
    const shown = unit === 'x' ? `${figure.toFixed(2)}x` : `${Math.round(figure)} ${unit}`;
    return rows.push([
      n,
      what,
      shown,
      `${atLeast ? '>=' : '<='} ${limit}${unit === 'x' ? 'x' : ` ${unit}`}`,
      ok ? 'ok' : 'short',
    ]);
  };
  const reported = (what, value) => rows.push(['', what, value ?? 'not measured', '', '']);
  const line = (...cells) => rows.push([...cells, '', '', '', '', ''].slice(0, WIDTHS.length));
  const print = (title) => {
    console.log(`\n${title}`);
    for (const row of rows)
      console.log(
        row
          .map((cell, i) => String(cell).padEnd(WIDTHS[i]))
          .join('')
          .trimEnd(),
      );
  };
  return { rows, goal, reported, line, print };
}

/**
 * Adds goal 3.5's lines (the `expo` builder against bare `npx expo export` runs of the same app,
 * docs/performance.md "Round three") from the figures bench/expo-bench.mjs writes (undefined:
 * not measured).
 */
export function expoGoalLines({ goal }, figures) {
  goal('3.5', 'expo: first build / a bare cold web export', figures?.firstBuildRatio, 1.15);
  goal('3.5', 'expo: warm rebuild after a one-line edit / a bare warm export', figures?.warmRebuildRatio, 1.15);
  goal('3.5', 'expo: first deploy / the bare exports it needs', figures?.deployRatio, 1.15);
}
