import type { Kysely } from 'kysely'
import type Provider from 'oidc-provider'
import type { KoaContextWithOIDC } from 'oidc-provider'
import type { CloudDB } from '../db/schema.js'
import { pageSecurityHeaders } from '../pages/forms.js'
import { escapeHtml, messagePage, page } from '../pages/layout.js'

type Middleware = Parameters<Provider['use']>[0]

/** Answers with one of the cloud's pages. */
export function renderPage(ctx: KoaContextWithOIDC, html: string): void {
  ctx.set(pageSecurityHeaders)
  ctx.type = 'html'
  ctx.body = html
}

/**
 * The end-session endpoint's question (RP-initiated logout): `form` is oidc-provider's hidden form
 * (its address and a one-time `xsrf` value); the buttons submit it.
 */
export function signOutPage(ctx: KoaContextWithOIDC, form: string): void {
  const client = ctx.oidc.client?.clientName
  renderPage(
    ctx,
    page(
      'Sign out',
      `<h1>Sign out of Relay Cloud?</h1>
<p>${client ? `<span class="client">${escapeHtml(client)}</span> asks to end your sign-in. ` : ''}You are signed in to Relay Cloud in this browser.
Relays you connected keep backing up until you disconnect them.</p>
${form}
<div class="actions"><button class="primary" type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<button type="submit" form="op.logoutForm">Stay signed in</button></div>`,
    ),
  )
}

/** Where a sign-out without a client to go back to ends. */
export function signedOutPage(ctx: KoaContextWithOIDC): void {
  renderPage(
    ctx,
    messagePage('You are signed out', 'This browser is no longer signed in to Relay Cloud. You can close this page.'),
  )
}

/**
 * A client that revokes its refresh token (RFC 7009) signs out: oidc-provider then ends the grant
 * with every token issued under it, and this ends the browser sign-in that made the grant too, so
 * the next sign-in in that browser asks for the password again. The relay is a back-end client:
 * it cannot send the browser to the end-session endpoint, and the browser that signed it in may be
 * another one, or gone. Runs before the answer is sent.
 */
export function endBrowserSignInOnRevocation(db: Kysely<CloudDB>): Middleware {
  return async (ctx, next) => {
    await next()
    if (ctx.oidc?.route !== 'revocation' || ctx.status !== 200) {
      return
    }
    const token = ctx.oidc.entities.RefreshToken
    // The revocation policy: a client ends only its own tokens.
    if (!token?.grantId || !token.accountId || token.clientId !== ctx.oidc.client?.clientId) {
      return
    }
    await endBrowserSignIns(db, token.accountId, token.clientId, token.grantId)
  }
}

/** Removes the account's browser sessions at the authorization server whose sign-in for `clientId` made `grantId`. */
async function endBrowserSignIns(
  db: Kysely<CloudDB>,
  accountId: string,
  clientId: string,
  grantId: string,
): Promise<number> {
  const sessions = await db
    .selectFrom('oauth_payloads')
    .select(['id', 'payload'])
    .where('model', '=', 'Session')
    .where('account_id', '=', accountId)
    .execute()
  const ended = sessions
    .filter((session) => {
      const authorizations = session.payload.authorizations as Record<string, { grantId?: string }> | undefined
      return authorizations?.[clientId]?.grantId === grantId
    })
    .map((session) => session.id)
  if (ended.length === 0) {
    return 0
  }
  await db.deleteFrom('oauth_payloads').where('model', '=', 'Session').where('id', 'in', ended).execute()
  return ended.length
}
