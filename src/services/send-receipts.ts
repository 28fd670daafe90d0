/**
 * Safe retries of `svc_send_message` (docs/contract.md#tools): a send with a `requestId` stores its
 * answer in the store (`send_receipts`), in the transaction that records the message, so a repeat
 * of the same `requestId` by the same user within `RECEIPT_TTL_MS` answers what the first answered
 * and records nothing new, through any API node. The repeat is decided under the user's row lock
 * (PostgreSQL; SQLite's `BEGIN IMMEDIATE` serialises every writer), so two repeats racing on two
 * nodes record one message. A send that failed stored nothing: its repeat runs again.
 */
import type { Repos } from '../store/repos.js';
import type { Tx } from '../store/store.js';
import type { SendMessageResult } from './resource-shapes.js';

/** How long a `requestId` is remembered, in ms. */
const RECEIPT_TTL_MS = 24 * 60 * 60_000;

/** One send's `requestId`, with the user and the store's clock. */
export interface ReceiptKey {
  userId: string;
  requestId: string;
  /** Now, in ms on the database's clock. */
  now: number;
}

/** The answer stored for `key` within the last 24 hours (read anywhere: the store's repositories or a transaction's). */
export async function earlierAnswer(
  repos: Pick<Repos, 'sendReceipts'>,
  key: ReceiptKey,
): Promise<SendMessageResult | undefined> {
  const stored = await repos.sendReceipts.find(key.userId, key.requestId, key.now - RECEIPT_TTL_MS);
  return stored === undefined ? undefined : (JSON.parse(stored) as SendMessageResult);
}

/**
 * Inside the send's transaction, before anything is recorded: locks the user's row, so that the
 * check and the receipt written by `keepAnswer` are one step across nodes.
 * @returns the earlier answer when the `requestId` was seen (the send then records nothing).
 */
export async function lockAndFindAnswer(tx: Tx, key: ReceiptKey): Promise<SendMessageResult | undefined> {
  await tx.lock('users', key.userId);
  return earlierAnswer(tx, key);
}

/** Inside the send's transaction, after the message was recorded: stores its answer (and forgets the user's expired ones). */
export async function keepAnswer(tx: Tx, key: ReceiptKey, result: SendMessageResult): Promise<void> {
  const since = key.now - RECEIPT_TTL_MS;
  await tx.sendReceipts.deleteBefore(key.userId, since);
  await tx.sendReceipts.put(
    { userId: key.userId, requestId: key.requestId, result: JSON.stringify(result), createdAt: key.now },
    since,
  );
}

/**
 * After the commit, when the answer changed from `answers.first` to `answers.final` (another node's
 * worker claimed the workflow meanwhile): stores the final one.
 */
export async function finalAnswer(
  repos: Pick<Repos, 'sendReceipts'>,
  key: ReceiptKey,
  { first, final }: { first: SendMessageResult; final: SendMessageResult },
): Promise<void> {
  if (JSON.stringify(first) !== JSON.stringify(final))
    await repos.sendReceipts.setResult(key.userId, key.requestId, JSON.stringify(final));
}
