import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { createHttpBrowser, defined, freePort, submitForm, tempDir } from '@relay/testkit'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud } from '../../test/cloud-server.js'
import { type MailInbox, startMailInbox } from '../../test/mail-inbox.js'
import { createMailer, type MailLog, MailNotSent } from './index.js'

const mailFrom = 'Relay Cloud <no-reply@relay.local>'
const message = {
  to: 'ada@example.com',
  subject: 'Reset your Relay Cloud password',
  text: 'Choose a new password:\nhttp://127.0.0.1/reset-password?token=secret-token-value',
  html: '<p><a href="http://127.0.0.1/reset-password?token=secret-token-value">Choose a new password</a></p>',
}

function recordingLog() {
  const lines: string[] = []
  const log: MailLog = {
    info: (obj, msg) => void lines.push(JSON.stringify({ ...obj, msg })),
    warn: (obj, msg) => void lines.push(JSON.stringify({ ...obj, msg })),
  }
  return { log, lines }
}

describe('mail', () => {
  let inbox: MailInbox

  beforeAll(async () => {
    inbox = await startMailInbox()
  })

  afterAll(async () => {
    await inbox?.close()
  })

  it('writes each message as an .eml file in the outbox without SMTP_URL, and logs its path, never its text', async () => {
    const data = tempDir('relay-cloud-mail-')
    try {
      const { log, lines } = recordingLog()
      const mailer = createMailer({ smtpUrl: undefined, mailFrom, dataDir: data.path }, log)
      await mailer.send(message)
      await mailer.send({ ...message, subject: 'Second' })

      const outbox = path.join(data.path, 'outbox')
      const files = readdirSync(outbox).sort()
      expect(files).toHaveLength(2)
      expect(files.every((file) => file.endsWith('.eml'))).toBe(true)
      const file = path.join(outbox, files[0] as string)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const parsed = await simpleParser(readFileSync(file))
      expect(parsed.from?.text).toBe('"Relay Cloud" <no-reply@relay.local>')
      expect(parsed.subject).toBe(message.subject)
      expect(parsed.text?.trim()).toBe(message.text)
      expect(parsed.html).toContain('href="http://127.0.0.1/reset-password?token=secret-token-value"')

      expect(lines).toHaveLength(2)
      expect(lines.join('\n')).toContain(outbox)
      expect(lines.join('\n')).not.toContain('secret-token-value')
    } finally {
      data.remove()
    }
  })

  it('sends through the SMTP server of SMTP_URL, signing in with its credentials', async () => {
    const { log, lines } = recordingLog()
    const mailer = createMailer({ smtpUrl: inbox.url, mailFrom, dataDir: '/nonexistent' }, log)
    await mailer.send(message)
    const received = inbox.last('ada@example.com')
    expect(received.subject).toBe(message.subject)
    expect(received.text.trim()).toBe(message.text)
    expect(received.parsed.from?.value[0]?.address).toBe('no-reply@relay.local')
    expect(lines.join('\n')).toContain('email sent')
    expect(lines.join('\n')).not.toContain('secret-token-value')
  })

  it('fails with MailNotSent, logged without the message, when the server refuses or cannot be reached', async () => {
    const { log, lines } = recordingLog()
    inbox.refuseRecipients = true
    try {
      const refused = createMailer({ smtpUrl: inbox.url, mailFrom, dataDir: '/nonexistent' }, log)
      await expect(refused.send(message)).rejects.toBeInstanceOf(MailNotSent)
    } finally {
      inbox.refuseRecipients = false
    }

    const wrongPassword = createMailer(
      { smtpUrl: inbox.url.replace(/:[^:@/]+@/, ':wrong@'), mailFrom, dataDir: '/x' },
      log,
    )
    await expect(wrongPassword.send(message)).rejects.toBeInstanceOf(MailNotSent)

    const nobody = createMailer({ smtpUrl: `smtp://127.0.0.1:${await freePort()}`, mailFrom, dataDir: '/x' }, log)
    await expect(nobody.send(message)).rejects.toMatchObject({ code: 'UNAVAILABLE', status: 503 })

    expect(lines.filter((line) => line.includes('email not sent'))).toHaveLength(3)
    expect(lines.join('\n')).not.toContain('secret-token-value')
    expect(lines.join('\n')).not.toContain('smtp test password')
  })
})

describe('the cloud without SMTP_URL', () => {
  it('writes its mail to the outbox of its data folder and logs where, never the link', async () => {
    const cloud = await startTestCloud('pglite')
    try {
      await cloud.addUser('reader@example.com', 'correct horse battery')
      const answer = await submitForm(createHttpBrowser(), new URL('/forgot-password', cloud.url), {
        email: 'reader@example.com',
      })
      expect(answer.status).toBe(200)
      const outbox = path.join(cloud.database.dataDir, 'outbox')
      const [file, ...others] = readdirSync(outbox)
      expect(others).toEqual([])
      const parsed = await simpleParser(readFileSync(path.join(outbox, defined(file))))
      expect(parsed.to).toMatchObject({ text: 'reader@example.com' })
      const token = defined(/\/reset-password\?token=([\w-]+)/.exec(parsed.text ?? '')?.[1])
      const logs = cloud.logs.join('')
      expect(logs).toContain(path.join(outbox, defined(file)))
      expect(logs).not.toContain(token)
    } finally {
      await cloud.close()
    }
  })
})
