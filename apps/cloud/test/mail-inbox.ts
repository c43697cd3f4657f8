import { freePort } from '@relay/testkit'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export type ReceivedMail = { to: string; subject: string; text: string; html: string; parsed: ParsedMail }

export type MailInbox = {
  /** `smtp://user:pass@127.0.0.1:<port>`: what the cloud's SMTP_URL is set to. */
  url: string
  /** Every message accepted so far, oldest first. */
  received: ReceivedMail[]
  /** The messages sent to `address` (case-insensitive), oldest first. */
  to(address: string): ReceivedMail[]
  /** The newest message to `address`; fails when there is none. */
  last(address: string): ReceivedMail
  /** While set, every recipient is refused with a 550, as a server that will not relay does. */
  refuseRecipients: boolean
  close(): Promise<void>
}

const user = 'relay-cloud'
const pass = 'smtp test password'

/**
 * A real SMTP server in this process, which the cloud reaches over TCP with its password. A message
 * is stored before the server acknowledges it, so once the cloud has answered a request its mail is here.
 */
export async function startMailInbox(): Promise<MailInbox> {
  const received: ReceivedMail[] = []
  const port = await freePort()
  const inbox: MailInbox = {
    url: `smtp://${user}:${encodeURIComponent(pass)}@127.0.0.1:${port}`,
    received,
    to: (address) => received.filter((mail) => mail.to.toLowerCase() === address.toLowerCase()),
    last(address) {
      const mail = inbox.to(address).at(-1)
      if (!mail) {
        throw new Error(`no mail to ${address}; received: ${received.map((m) => `${m.to} "${m.subject}"`).join(', ')}`)
      }
      return mail
    },
    refuseRecipients: false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) {
        callback(null, { user })
      } else {
        callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }))
      }
    },
    onRcptTo(_address, _session, callback) {
      callback(inbox.refuseRecipients ? Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }) : null)
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          for (const recipient of session.envelope.rcptTo) {
            received.push({
              to: recipient.address,
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              parsed,
            })
          }
          callback()
        })
        .catch(callback)
    },
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return inbox
}

/** The one link in a message's text that starts with `prefix` (e.g. `${cloud.url}/verify-email`). */
export function linkIn(mail: ReceivedMail, prefix: string): URL {
  const links = (mail.text.match(/https?:\/\/\S+/g) ?? []).filter((link) => link.startsWith(prefix))
  if (links.length !== 1) {
    throw new Error(`expected one link to ${prefix} in "${mail.subject}", found ${links.length}:\n${mail.text}`)
  }
  return new URL(links[0] as string)
}
