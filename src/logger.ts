/**
 * The process logger: pino, writing JSON lines to stderr only (stdout belongs to the stdio
 * protocol). Token-bearing fields are redacted wherever they appear.
 */
import { pino, type Logger } from 'pino';
import { DEFAULTS } from './core/defaults.js';

/** pino's logger type. */
export type { Logger };

/** Creates a logger on stderr. `level` defaults to env `SVC_LOG_LEVEL`, else `info`. */
export function createLogger(level: string = process.env.SVC_LOG_LEVEL ?? DEFAULTS.logLevel): Logger {
  return pino(
    {
      name: 'mobile-builder-mcp',
      level,
      redact: {
        paths: [
          'token',
          '*.token',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'req.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything (tests and library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
