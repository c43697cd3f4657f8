import { MB, relayClientId } from '@relay/contracts'
import { credentialFields, escapeHtml, page } from '../pages/layout.js'
import type { AccountOverview } from './service.js'

/** The account page's additions to the shared look: a wider card with sections, lists and inline buttons. */
const accountStyles = `
body{padding:1rem 0}
main.wide{width:min(46rem,calc(100vw - 1rem));padding:1.5rem}
@media (min-width:40rem){main.wide{padding:2rem}}
h2{font-size:1.1rem;margin:0 0 .5rem}h3{font-size:1rem;margin:1rem 0 .25rem}
section{border-top:1px solid var(--line);padding:1.25rem 0 .25rem;margin-top:1.25rem}
.top{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:flex-start;gap:.5rem 1rem}
.top form .actions{margin-top:0}
.facts{margin:0 0 .5rem;display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
.rows{list-style:none;margin:.5rem 0 1rem;padding:0}
.rows li{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding:.6rem 0;border-bottom:1px solid var(--line)}
.rows li:last-child{border-bottom:0}
.rows .what{min-width:0;overflow-wrap:anywhere}
.rows .what span{display:block;color:var(--muted);font-size:.9rem}
.rows form .actions,.rows .actions{margin:0}
.rows button{flex:none;padding:.4rem .8rem}
.tag{display:inline-block;font-size:.8rem;font-weight:600;border:1px solid currentColor;border-radius:999px;padding:0 .5rem;margin-left:.4rem}
.ok{color:var(--ok)}.warn{color:var(--danger)}
button.danger{border-color:var(--danger);color:var(--danger)}
code{overflow-wrap:anywhere}
`

/** An account page: the shared look with the account page's additions. */
export function accountLayout(title: string, body: string, { wide = false } = {}): string {
  return page(title, body, { extraStyles: accountStyles, wide })
}

export function accountMessagePage(title: string, message: string, link?: { href: string; text: string }): string {
  const more = link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : ''
  return accountLayout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${more}`)
}

const alert = (message: string | undefined) =>
  message ? `<div class="alert" role="alert">${escapeHtml(message)}</div>` : ''

export type SignInView = { email?: string; error?: string; links: { signUp: string; forgotPassword: string } }

export function accountSignInPage({ email = '', error, links }: SignInView): string {
  return accountLayout(
    'Sign in',
    `<h1>Sign in to your account</h1>
<p>See your license, your relays and your backups, and change your details.</p>
${alert(error)}
<form method="post" action="/account/sign-in">
${credentialFields(email)}
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
<div class="links"><a href="${escapeHtml(links.forgotPassword)}">Forgot your password?</a><a href="${escapeHtml(links.signUp)}">Create an account</a></div>`,
  )
}

/** The sections of the account page a form error can belong to. */
export type AccountSection = 'profile' | 'email' | 'password' | 'license' | 'relays' | 'browsers' | 'backups' | 'delete'

export type AccountPageView = {
  overview: AccountOverview
  notice?: string
  error?: { section: AccountSection; message: string }
  /** What the person typed, shown again with an error. */
  values?: { name?: string; email?: string }
  /** The operator command that grants a license without billing. */
  giftCommand: string
}

const dateFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
const dayFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' })

function when(date: Date | string, format = dateFormat): string {
  const at = new Date(date)
  return `<time datetime="${escapeHtml(at.toISOString())}">${escapeHtml(format.format(at))}${format === dateFormat ? ' UTC' : ''}</time>`
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`
  }
  if (bytes < MB) {
    return `${(bytes / 1024).toFixed(1)} KB`
  }
  return `${(bytes / MB).toFixed(1).replace(/\.0$/, '')} MB`
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

export function accountPage(view: AccountPageView): string {
  const { overview, error } = view
  const { account } = overview
  const errorIn = (section: AccountSection) => (error?.section === section ? alert(error.message) : '')
  const body = `<div class="top"><div><h1>Your account</h1><p>Signed in as <span class="client">${escapeHtml(account.email)}</span>.</p></div>
<form method="post" action="/account/sign-out"><div class="actions"><button type="submit">Sign out</button></div></form></div>
${view.notice ? `<div class="notice" role="status">${escapeHtml(view.notice)}</div>` : ''}
${profileSection(view, errorIn('profile'))}
${emailSection(view, errorIn('email'))}
${passwordSection(errorIn('password'))}
${licenseSection(view, errorIn('license'))}
${relaySection(overview, errorIn('relays'))}
${browserSection(overview, errorIn('browsers'))}
${backupSection(overview, errorIn('backups'))}
${deleteSection(errorIn('delete'))}`
  return accountLayout('Your account', body, { wide: true })
}

function profileSection({ overview, values }: AccountPageView, error: string): string {
  const { account } = overview
  const verified = account.emailVerified
    ? '<span class="tag ok">verified</span>'
    : '<span class="tag warn">not verified</span>'
  return `<section aria-labelledby="profile-title"><h2 id="profile-title">Profile</h2>
<dl class="facts"><dt>Name</dt><dd>${escapeHtml(account.name)}</dd><dt>Email</dt><dd>${escapeHtml(account.email)}${verified}</dd></dl>
${error}
<form method="post" action="/account/name">
<label for="name">Name</label>
<input id="name" name="name" type="text" required maxlength="255" autocomplete="name" value="${escapeHtml(values?.name ?? account.name)}">
<div class="actions"><button type="submit">Save name</button></div>
</form></section>`
}

function emailSection({ values }: AccountPageView, error: string): string {
  return `<section aria-labelledby="email-title"><h2 id="email-title">Email address</h2>
<p>We send a confirmation link to the new address. Your email changes when you follow it.</p>
${error}
<form method="post" action="/account/email">
<label for="new-email">New email address</label>
<input id="new-email" name="email" type="email" required maxlength="255" autocomplete="email" value="${escapeHtml(values?.email ?? '')}">
<label for="email-password">Current password</label>
<input id="email-password" name="password" type="password" required maxlength="256" autocomplete="current-password">
<div class="actions"><button type="submit">Send confirmation link</button></div>
</form></section>`
}

function passwordSection(error: string): string {
  return `<section aria-labelledby="password-title"><h2 id="password-title">Password</h2>
<p>Changing your password signs out every relay and every other browser. This browser stays signed in.</p>
${error}
<form method="post" action="/account/password">
<label for="current-password">Current password</label>
<input id="current-password" name="current" type="password" required maxlength="256" autocomplete="current-password">
<label for="new-password">New password</label>
<input id="new-password" name="password" type="password" required minlength="8" maxlength="256" autocomplete="new-password">
<label for="repeat-password">New password again</label>
<input id="repeat-password" name="repeat" type="password" required minlength="8" maxlength="256" autocomplete="new-password">
<div class="actions"><button type="submit">Change password</button></div>
</form></section>`
}

function licenseSection({ overview, giftCommand }: AccountPageView, error: string): string {
  const { license, billingConfigured } = overview
  const state = !license.valid
    ? '<p>You have no Pro license. Cloud backups need one.</p>'
    : license.source === 'gifted'
      ? '<p>You have a Pro license, granted by an operator of this cloud.</p>'
      : `<p>You have a Pro license through your subscription.${
          license.renewsAt ? ` It renews on ${when(license.renewsAt, dayFormat)}.` : ''
        }</p>`
  const subscribed = license.valid && license.source === 'subscription'
  const action = !billingConfigured
    ? `<p>Billing is not configured on this cloud. An operator grants licenses with <code>${escapeHtml(giftCommand)}</code>.</p>`
    : subscribed
      ? '<form method="post" action="/account/subscription"><div class="actions"><button type="submit">Manage subscription</button></div></form>'
      : license.valid
        ? ''
        : '<form method="post" action="/account/upgrade"><div class="actions"><button class="primary" type="submit">Upgrade to Pro</button></div></form>'
  return `<section aria-labelledby="license-title"><h2 id="license-title">Pro license</h2>
${state}${error}${action}</section>`
}

function relaySection({ relaySessions }: AccountOverview, error: string): string {
  const list =
    relaySessions.length === 0
      ? '<p>No relay is signed in. To back up a relay, open its Backups page and choose to sign in with the cloud.</p>'
      : `<ul class="rows">${relaySessions
          .map((session) => {
            const name = session.clientId === relayClientId ? 'Relay' : session.clientId
            return `<li><div class="what">${escapeHtml(name)}<span>Signed in on ${when(session.createdAt)}${
              session.expiresAt ? `, until ${when(session.expiresAt)}` : ''
            }</span></div>
<form method="post" action="/account/relay-sessions/${escapeHtml(session.id)}/revoke"><div class="actions"><button type="submit" aria-label="Sign out the relay signed in on ${escapeHtml(dateFormat.format(new Date(session.createdAt)))} UTC">Sign out</button></div></form></li>`
          })
          .join('')}</ul>`
  return `<section aria-labelledby="relays-title"><h2 id="relays-title">Signed-in relays</h2>
<p>A relay signed out here stops backing up until someone signs it in again.</p>${error}${list}</section>`
}

function browserSection({ browserSessions }: AccountOverview, error: string): string {
  const rows = browserSessions
    .map((session) => {
      const label = session.current ? 'This browser' : 'Another browser'
      const action = session.current
        ? '<span class="tag">current</span>'
        : `<form method="post" action="/account/browser-sessions/${escapeHtml(session.id)}/revoke"><div class="actions"><button type="submit" aria-label="Sign out the browser last seen ${escapeHtml(dateFormat.format(session.lastSeenAt))} UTC">Sign out</button></div></form>`
      return `<li><div class="what">${label}<span>Signed in on ${when(session.createdAt)}, last seen ${when(session.lastSeenAt)}</span></div>${action}</li>`
    })
    .join('')
  return `<section aria-labelledby="browsers-title"><h2 id="browsers-title">Browsers signed in to this page</h2>
${error}<ul class="rows">${rows}</ul></section>`
}

function backupSection({ usage, relays, backups }: AccountOverview, error: string): string {
  const totals = `<p>You use ${formatBytes(usage.totalBytes)} of ${formatBytes(usage.maxTotalBytes)} and ${plural(
    usage.completedCount + usage.pendingCount,
    'backup',
    'backups',
  )} of ${usage.maxBackups}. A single backup can be at most ${formatBytes(usage.maxBackupBytes)}.</p>`
  if (backups.length === 0) {
    return `<section aria-labelledby="backups-title"><h2 id="backups-title">Backups</h2>${totals}${error}
<p>You have no backups yet. Turn on cloud backups on a relay's Backups page, or choose Back up now there.</p></section>`
  }
  const perRelay = `<ul class="rows">${relays
    .map(
      (relay) =>
        `<li><div class="what">Relay <code>${escapeHtml(relay.backendId)}</code><span>${plural(relay.count, 'backup', 'backups')}, ${formatBytes(relay.bytes)}, newest ${when(relay.newest)}</span></div></li>`,
    )
    .join('')}</ul>`
  const downloads = `<ul class="rows">${backups
    .map(
      (backup) =>
        `<li><div class="what">${escapeHtml(backup.filename)}<span>Relay <code>${escapeHtml(backup.backendId)}</code>, ${when(backup.createdAt)}, ${formatBytes(backup.bytes)}${
          backup.expiresAt ? `, kept until ${when(backup.expiresAt, dayFormat)}` : ''
        }</span></div><a href="/account/backups/${escapeHtml(backup.id)}/download" aria-label="Download ${escapeHtml(backup.filename)}">Download</a></li>`,
    )
    .join('')}</ul>`
  return `<section aria-labelledby="backups-title"><h2 id="backups-title">Backups</h2>${totals}${error}
<h3>Storage by relay</h3>${perRelay}
<h3>Download all my backups</h3><p>Each link works for a few minutes; open the page again for fresh ones.</p>${downloads}</section>`
}

function deleteSection(error: string): string {
  return `<section aria-labelledby="delete-title"><h2 id="delete-title">Delete account</h2>
<p>This deletes your account, every backup in it with its files, your license and your relays' sign-ins, and ends the link to your subscription. It cannot be undone.</p>
${error}
<form method="post" action="/account/delete">
<label for="delete-password">Your password, to confirm</label>
<input id="delete-password" name="password" type="password" required maxlength="256" autocomplete="current-password">
<div class="actions"><button class="danger" type="submit">Delete my account</button></div>
</form></section>`
}

export function accountDeletedPage(): string {
  return accountMessagePage(
    'Your account was deleted',
    'Your backups and their files, your license and every sign-in are gone. You are signed out.',
  )
}
