import type { FastifyServerOptions } from 'fastify'

export type LoggerSettings = {
  level: string
  pretty: boolean
  /** Where log lines go; stdout by default. */
  stream?: { write(line: string): void }
}

/** Paths pino blanks out: credentials never reach a log line. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.code_verifier',
  '*.client_secret',
  '*.token',
  '*.secret',
]

export function loggerOptions({ level, pretty, stream }: LoggerSettings): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: redactedPaths, censor: '[redacted]' },
    // Query strings can carry OAuth codes and state; log the path only.
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.split('?')[0],
        ip: req.ip,
      }),
    },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  }
}
