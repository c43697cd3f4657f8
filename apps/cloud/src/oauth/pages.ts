/** The authorization server's sign-in page for relays. No scripts, every value escaped. */

import { credentialFields, escapeHtml, page } from '../pages/layout.js'
import { registrationPaths, withReturn } from '../registration/paths.js'

export type SignInView = {
  uid: string
  clientName: string
  email?: string
  error?: string
  /** The account's password matched but its address is not confirmed yet. */
  unverified?: boolean
}

export function signInPage({ uid, clientName, email = '', error, unverified = false }: SignInView): string {
  const action = `/interaction/${encodeURIComponent(uid)}`
  return page(
    'Sign in',
    `<h1>Sign in to Relay Cloud</h1>
<p><span class="client">${escapeHtml(clientName)}</span> wants to use your cloud account for backups.</p>
${error ? `<div class="alert" role="alert">${escapeHtml(error)}</div>` : ''}
${unverified ? unverifiedNotice(uid, email) : ''}
<form method="post" action="${action}/login" autocomplete="on">
${credentialFields(email)}
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
<form method="post" action="${action}/abort"><div class="actions"><button type="submit">Cancel</button></div></form>
<div class="links"><a href="${escapeHtml(withReturn(registrationPaths.signUp, uid))}">Create an account</a>
<a href="${escapeHtml(withReturn(registrationPaths.forgotPassword, uid))}">Forgot your password?</a></div>`,
  )
}

function unverifiedNotice(uid: string, email: string): string {
  return `<div class="alert" role="alert">Confirm your email address first: we sent a link to ${escapeHtml(email)}.
<form method="post" action="${registrationPaths.resendVerification}">
<input type="hidden" name="email" value="${escapeHtml(email)}"><input type="hidden" name="uid" value="${escapeHtml(uid)}">
<div class="actions"><button type="submit">Send the link again</button></div></form></div>`
}
