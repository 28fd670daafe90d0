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
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}`);
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
 * A comma-separated list of Expo SDKs this package ships a toolchain for (`58,54`), in the given
 * order, without repeats.
 * @throws InvalidArgumentError `supported Expo SDKs: 58, 54 (comma-separated, the first ...)`.
 */
export function expoSdks(value: string): number[] {
  const items = commaList(value);
  const sdks = items.map(Number);
  const supported = SUPPORTED_EXPO_SDKS as readonly number[];
  if (sdks.length === 0 || sdks.some((n) => !supported.includes(n))) {
    throw new InvalidArgumentError(
      `supported Expo SDKs: ${supported.join(', ')} (comma-separated, the first is the SDK of previews)`,
    );
  }
  return [...new Set(sdks)];
}

/** A comma-separated list, each item trimmed, empty items dropped (`a, b,` is `['a', 'b']`). */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
