import { passwordRules } from '../directory/service.js'
import { escapeHtml, messagePage, page } from '../pages/layout.js'
import { registrationPaths, withReturn } from './paths.js'

/** The registration pages: forms and outcomes. Server-rendered, no scripts, every value escaped. */

type FieldErrors = Partial<Record<string, string>>

const alert = (message: string | undefined) =>
  message ? `<div class="alert" role="alert">${escapeHtml(message)}</div>` : ''

const hidden = (name: string, value: string | undefined) =>
  value === undefined ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`

function field(options: {
  name: string
  label: string
  type: string
  autocomplete: string
  value?: string
  maxlength: number
  minlength?: number
  required?: boolean
  hint?: string
  error?: string
}): string {
  const { name, label, type, autocomplete, value, maxlength, minlength, required = true, hint, error } = options
  const described = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ')
  return `<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" type="${type}" autocomplete="${autocomplete}" maxlength="${maxlength}"${
    minlength ? ` minlength="${minlength}"` : ''
  }${required ? ' required' : ''}${value ? ` value="${escapeHtml(value)}"` : ''}${
    described ? ` aria-describedby="${described}"` : ''
  }${error ? ' aria-invalid="true"' : ''}>
${hint ? `<p class="hint" id="${name}-hint">${escapeHtml(hint)}</p>` : ''}${
  error ? `<p class="hint alert" id="${name}-error">${escapeHtml(error)}</p>` : ''
}`
}

const passwordHint = `At least ${passwordRules.minLength} characters.`

/** Where "back to signing in" goes: the relay's sign-in when it is still open. */
function backToSignIn(uid: string | undefined, open: boolean): string {
  return uid && open
    ? `<p><a href="/interaction/${encodeURIComponent(uid)}">Continue signing in to your relay</a></p>`
    : '<p>You can now sign in from your relay: choose "Sign in with cloud" there.</p>'
}

export type SignUpView = { uid?: string; email?: string; name?: string; errors?: FieldErrors; error?: string }

export function signUpPage({ uid, email = '', name = '', errors = {}, error }: SignUpView): string {
  return page(
    'Create an account',
    `<h1>Create a Relay Cloud account</h1>
<p>Back up your relays to the cloud. We will send you a link to confirm your email address.</p>
${alert(error)}
<form method="post" action="${registrationPaths.signUp}">
${hidden('uid', uid)}
${field({ name: 'email', label: 'Email', type: 'email', autocomplete: 'email', value: email, maxlength: 255, error: errors.email })}
${field({ name: 'name', label: 'Name (optional)', type: 'text', autocomplete: 'name', value: name, maxlength: 255, required: false, error: errors.name })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', maxlength: passwordRules.maxLength, minlength: passwordRules.minLength, hint: passwordHint, error: errors.password })}
<div class="actions"><button class="primary" type="submit">Create account</button></div>
</form>
${uid ? `<div class="links"><a href="/interaction/${encodeURIComponent(uid)}">I already have an account</a></div>` : ''}`,
  )
}

/** The answer to a sign-up, a resend or a reset request: the same whether or not the address has an account. */
export function checkEmailPage(email: string, what: string): string {
  return page(
    'Check your email',
    `<h1>Check your email</h1>
<div class="notice" role="status">We sent an email to ${escapeHtml(email)}.</div>
<p>${escapeHtml(what)} If nothing arrives within a few minutes, look in your spam folder.</p>`,
  )
}

export const signUpSent = 'Follow the link in it to confirm your address. The link works for 24 hours.'
export const resendSent = 'If this address has an account waiting for confirmation, the email holds a new link.'
export const resetSent = 'Follow the link in it to choose a new password. The link works for 1 hour.'

/** A form whose one button uses a mailed link: opening a link never uses it (mail scanners open links). */
function useLinkPage(
  title: string,
  intro: string,
  action: string,
  token: string,
  uid: string | undefined,
  button: string,
) {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(intro)}</p>
<form method="post" action="${action}">
${hidden('token', token)}${hidden('uid', uid)}
<div class="actions"><button class="primary" type="submit">${escapeHtml(button)}</button></div>
</form>`,
  )
}

export function verifyEmailPage(token: string, uid: string | undefined): string {
  return useLinkPage(
    'Confirm your email address',
    'Confirm that this is your email address to finish creating your Relay Cloud account.',
    registrationPaths.verifyEmail,
    token,
    uid,
    'Confirm my email address',
  )
}

export function emailVerifiedPage(email: string, uid: string | undefined, open: boolean): string {
  return page(
    'Your email is verified',
    `<h1>Your email is verified</h1>
<div class="notice" role="status">${escapeHtml(email)} is confirmed. Your account is ready.</div>
${backToSignIn(uid, open)}`,
  )
}

const linkAdvice = {
  verify:
    'Confirmation links work once and for 24 hours. Sign in from your relay with your email and password to get a new one.',
  reset: 'Reset links work once and for 1 hour. Ask for a new one below.',
  change: 'Email change links work once and for 24 hours. Ask for the change again from your account page.',
} as const

export function linkNotValidPage(kind: keyof typeof linkAdvice, uid?: string): string {
  const retry =
    kind === 'reset'
      ? `<div class="links"><a href="${escapeHtml(withReturn(registrationPaths.forgotPassword, uid))}">Send a new reset link</a></div>`
      : ''
  return page(
    'This link is not valid any more',
    `<h1>This link is not valid any more</h1>
<p>It was already used, it has expired, or it was copied incompletely. ${escapeHtml(linkAdvice[kind])}</p>${retry}`,
  )
}

export type ForgotPasswordView = { uid?: string; email?: string; error?: string }

export function forgotPasswordPage({ uid, email = '', error }: ForgotPasswordView): string {
  return page(
    'Reset your password',
    `<h1>Reset your password</h1>
<p>Enter the email address of your account and we will send you a link to choose a new password.</p>
<form method="post" action="${registrationPaths.forgotPassword}">
${hidden('uid', uid)}
${field({ name: 'email', label: 'Email', type: 'email', autocomplete: 'email', value: email, maxlength: 255, error })}
<div class="actions"><button class="primary" type="submit">Send the link</button></div>
</form>
${uid ? `<div class="links"><a href="/interaction/${encodeURIComponent(uid)}">Back to signing in</a></div>` : ''}`,
  )
}

export type ResetPasswordView = { token: string; uid?: string; errors?: FieldErrors }

export function resetPasswordPage({ token, uid, errors = {} }: ResetPasswordView): string {
  return page(
    'Choose a new password',
    `<h1>Choose a new password</h1>
<p>Every relay signed in to your account will be signed out and has to sign in again.</p>
<form method="post" action="${registrationPaths.resetPassword}">
${hidden('token', token)}${hidden('uid', uid)}
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', maxlength: passwordRules.maxLength, minlength: passwordRules.minLength, hint: passwordHint, error: errors.password })}
${field({ name: 'confirm', label: 'New password again', type: 'password', autocomplete: 'new-password', maxlength: passwordRules.maxLength, error: errors.confirm })}
<div class="actions"><button class="primary" type="submit">Change password</button></div>
</form>`,
  )
}

export function passwordChangedPage(uid: string | undefined, open: boolean): string {
  return page(
    'Your password was changed',
    `<h1>Your password was changed</h1>
<div class="notice" role="status">Every relay that was signed in to your account has been signed out.</div>
${backToSignIn(uid, open)}`,
  )
}

export function confirmEmailChangePage(token: string, newEmail: string): string {
  return useLinkPage(
    'Change your email address',
    `Your Relay Cloud account will use ${newEmail} from now on, for signing in and for mail.`,
    registrationPaths.confirmEmailChange,
    token,
    undefined,
    'Use this address',
  )
}

export function emailChangedPage(email: string): string {
  return messagePage(
    'Your email address was changed',
    `Your account now uses ${email}. Sign in with this address from now on.`,
  )
}

export function emailTakenPage(email: string): string {
  return messagePage(
    'This address already has an account',
    `${email} belongs to another Relay Cloud account by now, so your address was not changed. Choose another address from your account page.`,
  )
}

export function throttledPage(message: string): string {
  return messagePage('Please wait a moment', message)
}

export function mailNotSentPage(): string {
  return messagePage(
    'The email could not be sent',
    'Our mail server did not accept the message. Nothing was changed: try again in a few minutes.',
  )
}
