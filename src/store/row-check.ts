/**
 * The compile-time check that an adapter's drizzle schema gives the port's rows (docs/architecture.md,
 * "The store port"): each schema lists `SameRow<typeof table.$inferSelect, PortRow>` for its tables
 * in one `RowsMatch<[...]>`, which compiles only when every pair is the same row, so a column added,
 * dropped, renamed, made nullable or given another type on either side fails `npm run typecheck`.
 */

/**
 * `true` when the schema's row and the port's row accept each other's values; otherwise the
 * columns only one of them has (both `never` when the names agree but a column's type differs),
 * which the type checker prints in its error.
 */
export type SameRow<Schema, Port> = [Schema] extends [Port]
  ? [Port] extends [Schema]
    ? true
    : RowDrift<Schema, Port>
  : RowDrift<Schema, Port>;

/** What a drifted row shows in the type checker's error. */
interface RowDrift<Schema, Port> {
  columnsOnlyInTheSchema: Exclude<keyof Schema, keyof Port>;
  columnsOnlyInThePort: Exclude<keyof Port, keyof Schema>;
}

/** The rows of one schema: a type error at the first `SameRow` that is not `true`. */
export type RowsMatch<Checks extends readonly true[]> = Checks;
