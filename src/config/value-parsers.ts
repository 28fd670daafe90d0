/**
 * Parsers of the command line's values (and of their `SVC_*` environment equivalents, which
 * commander passes through the same parser). Each throws commander's `InvalidArgumentError`,
 * which commander prints as `error: option '<flags>' argument '<value>' is invalid. <message>`
 * and turns into exit code 1.
 */
import { InvalidArgumentError } from 'commander';
import { parseTrustedProxies } from '../auth/client-address.js';
import { SUPPORTED_EXPO_SDKS } from '../builders/expo/index.js';

/**
 * A parser of whole numbers of at least `min`.
 * @param name the flag, as the message names it (`--port`).
 * @returns a parser that throws `InvalidArgumentError` `<name> must be a whole number of at least <min>`.
 */
export function wholeNumber(name: string, min = 0): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}`);
    return n;
  };
}

/**
 * `--trust-proxy`: comma-separated addresses, CIDR ranges or `loopback`.
 * @throws InvalidArgumentError `--trust-proxy: <why>`.
 */
export function trustedProxies(value: string): string[] {
  try {
    return parseTrustedProxies(value);
  } catch (error) {
    throw new InvalidArgumentError(`--trust-proxy: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * An Expo SDK this package ships a toolchain for.
 * @throws InvalidArgumentError `supported Expo SDKs: 56, ...`.
 */
export function expoSdk(value: string): number {
  const n = Number(value);
  if (!(SUPPORTED_EXPO_SDKS as readonly number[]).includes(n)) throw new InvalidArgumentError(`supported Expo SDKs: ${SUPPORTED_EXPO_SDKS.join(', ')}`);
  return n;
}

/** A comma-separated list, each item trimmed, empty items dropped (`a, b,` is `['a', 'b']`). */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
