import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '@relay/contracts'
import { createTransport } from 'nodemailer'
import type { CloudConfig } from '../config.js'

export type MailMessage = { to: string; subject: string; text: string; html?: string }

export type Mailer = { send(message: MailMessage): Promise<void> }

export type MailLog = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }

/** A message that could not be handed over: the SMTP server refused it or could not be reached. */
export class MailNotSent extends AppError {
  constructor(options?: ErrorOptions) {
    super('UNAVAILABLE', 'The email could not be sent. Try again in a few minutes.', options)
  }
}

/** How long a web request waits for the SMTP server: a slow server fails the request rather than hangs it. */
const smtpTimeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }

/**
 * Sends the cloud's mail: through the SMTP server of `SMTP_URL`, or without one (the embedded default,
 * so `npm start` needs nothing else) as `.eml` files under `<data dir>/outbox/`, each one's path logged.
 * The log never holds a message's text: links in it are single-use credentials.
 */
export function createMailer(config: Pick<CloudConfig, 'smtpUrl' | 'mailFrom' | 'dataDir'>, log: MailLog): Mailer {
  const defaults = { from: config.mailFrom }
  if (config.smtpUrl) {
    const transport = createTransport({ url: config.smtpUrl, ...smtpTimeouts }, defaults)
    return {
      async send(message) {
        try {
          const info = await transport.sendMail(message)
          log.info({ messageId: info.messageId, subject: message.subject }, 'email sent')
        } catch (err) {
          log.warn({ problem: smtpProblem(err), subject: message.subject }, 'email not sent')
          throw new MailNotSent({ cause: err })
        }
      },
    }
  }

  const outbox = path.join(config.dataDir, 'outbox')
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'unix' }, defaults)
  return {
    async send(message) {
      try {
        const { message: raw } = await transport.sendMail(message)
        await mkdir(outbox, { recursive: true, mode: 0o700 })
        const file = path.join(
          outbox,
          `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`,
        )
        // Owner-only: the file holds a working link.
        await writeFile(file, raw as Buffer, { mode: 0o600, flag: 'wx' })
        log.info({ path: file, subject: message.subject }, 'email written to the outbox (SMTP_URL is not set)')
      } catch (err) {
        log.warn({ problem: smtpProblem(err), outbox }, 'email not written to the outbox')
        throw new MailNotSent({ cause: err })
      }
    },
  }
}

/** What went wrong, without the message or anything of the connection's credentials. */
function smtpProblem(err: unknown): string {
  if (!(err instanceof Error)) {
    return String(err)
  }
  const { code, responseCode } = err as { code?: unknown; responseCode?: unknown }
  return [code, responseCode, err.message].filter((part) => part !== undefined).join(' ')
}
