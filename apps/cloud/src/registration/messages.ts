import type { MailMessage } from '../mail/index.js'
import { escapeHtml } from '../pages/layout.js'

/** The mails of sign-up, password reset and email change. Each is plain text with the same words in HTML. */

type Paragraph = string | { link: string; label: string }

function message(to: string, subject: string, paragraphs: Paragraph[]): MailMessage {
  const text = paragraphs.map((part) => (typeof part === 'string' ? part : `${part.label}:\n${part.link}`)).join('\n\n')
  const html = paragraphs
    .map((part) =>
      typeof part === 'string'
        ? `<p>${escapeHtml(part)}</p>`
        : `<p><a href="${escapeHtml(part.link)}">${escapeHtml(part.label)}</a></p>`,
    )
    .join('\n')
  return { to, subject, text: `${text}\n\n- Relay Cloud\n`, html: `${html}\n<p>- Relay Cloud</p>` }
}

const notYou = 'If you did not ask for this, ignore this email: nothing changes.'

export function verifyEmailMail(to: string, link: string): MailMessage {
  return message(to, 'Confirm your email address for Relay Cloud', [
    'Welcome to Relay Cloud. Confirm that this is your email address to finish creating your account.',
    { link, label: 'Confirm your email address' },
    'The link works once and for 24 hours.',
    'If you did not create a Relay Cloud account, ignore this email and the account will never be usable.',
  ])
}

export function signUpAgainMail(to: string, resetLink: string): MailMessage {
  return message(to, 'Someone tried to create a Relay Cloud account with your address', [
    'Someone tried to create a Relay Cloud account with this email address, which already has one.',
    'If it was you, sign in with your password from your relay. If you forgot it, choose a new one:',
    { link: resetLink, label: 'Reset your password' },
    'If it was not you, you need not do anything: your account did not change.',
  ])
}

export function resetPasswordMail(to: string, link: string): MailMessage {
  return message(to, 'Reset your Relay Cloud password', [
    'Someone asked to reset the password of the Relay Cloud account for this address.',
    { link, label: 'Choose a new password' },
    'The link works once and for 1 hour. Resetting signs out every relay signed in to your account.',
    notYou,
  ])
}

export function noAccountMail(to: string, signUpLink: string): MailMessage {
  return message(to, 'Relay Cloud password reset', [
    'Someone asked to reset the password of a Relay Cloud account for this address, but there is no account for it.',
    { link: signUpLink, label: 'Create an account' },
    notYou,
  ])
}

export function confirmEmailChangeMail(to: string, link: string): MailMessage {
  return message(to, 'Confirm your new email address for Relay Cloud', [
    'Someone asked to move a Relay Cloud account to this email address.',
    { link, label: 'Use this address for my account' },
    'The link works once and for 24 hours.',
    notYou,
  ])
}

export function emailTakenMail(to: string): MailMessage {
  return message(to, 'Relay Cloud email change', [
    'Someone asked to move a Relay Cloud account to this email address, but it already belongs to an account. Nothing changed.',
    'An address can belong to one account only: to use it for the other account, delete or move this one first.',
  ])
}

export function emailChangedMail(to: string, newEmail: string): MailMessage {
  return message(to, 'Your Relay Cloud email address was changed', [
    `The email address of your Relay Cloud account was changed to ${newEmail}. From now on, sign in with that address.`,
    'If you did not do this, reset your password at once from the sign-in page and contact the operator of this cloud.',
  ])
}
