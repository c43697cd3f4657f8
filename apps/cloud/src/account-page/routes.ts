import { AppError, type ErrorCode } from '@relay/contracts'
import { type HttpServer, toErrorBody } from '@relay/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdentityDirectory } from '../directory/directory.js'
import { nameMaxLength } from '../directory/service.js'
import { pageSecurityHeaders } from '../pages/forms.js'
import { type AccountSection, accountDeletedPage, accountMessagePage, accountPage, accountSignInPage } from './pages.js'
import { type AccountPageService, type PageAccount, toPageAccount } from './service.js'
import {
  type BrowserSession,
  type BrowserSessions,
  clearedSessionCookie,
  readCookie,
  sessionCookie,
  sessionCookieName,
} from './sessions.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `'optional'`: an account page route that answers signed-out browsers too (its sign-in). Every
     * other route of the account page needs a browser session: the check denies by default.
     */
    accountSession?: 'optional'
  }
  interface FastifyRequest {
    /** The browser's account page session, set by the session check; null when signed out. */
    accountUser: SignedIn | null
  }
}

type SignedIn = { session: BrowserSession; account: PageAccount }

export type AccountPageRoutesOptions = {
  service: AccountPageService
  sessions: BrowserSessions
  directory: IdentityDirectory
  /** The cloud's public address: forms must come from its origin, and the cookie is Secure over HTTPS. */
  publicUrl: string
  /** Where signing up and resetting a password happen. */
  links: { signUp: string; forgotPassword: string }
  giftCommand: string
}

type Form = Record<string, string[]>

/** Confirmations shown after a change, by the key the redirect carries (never free text from the URL). */
const notices = {
  name: 'Your name was saved.',
  email: 'We sent a confirmation link to the new address. Your email changes when you follow it.',
  password: 'Your password was changed. Every relay and every other browser was signed out; sign them in again.',
  relay: 'The relay was signed out. It backs up again once someone signs it in.',
  browser: 'That browser was signed out.',
  upgraded: 'Thank you. Your Pro license starts as soon as the payment is confirmed, usually within a minute.',
} as const

const sessionIdPattern = /^[0-9a-f]{64}$/

const maxLengths = { email: 255, password: 256, name: nameMaxLength } as const

/** Sentences for the failures Fastify raises before a handler runs. */
const frameworkMessages: Partial<Record<ErrorCode, string>> = {
  PAYLOAD_TOO_LARGE: 'The form was too large. Shorten what you typed and send it again.',
  UNSUPPORTED_MEDIA_TYPE: 'This address accepts only the forms of the account page. Send the form from that page.',
  INVALID_REQUEST: 'The form could not be read. Go back to your account page and send it again.',
}

/**
 * The account page: a signed-in web area for people, with its own browser session (a cookie) instead
 * of bearer tokens, so its routes are public to the token guard and checked here. Every POST must
 * come from the cloud's own origin: SameSite=Lax alone lets a sibling subdomain post forms.
 */
export async function accountPageRoutes(app: HttpServer, options: AccountPageRoutesOptions) {
  const { service, sessions, directory } = options
  const origin = new URL(options.publicUrl).origin
  const secure = origin.startsWith('https:')
  const cookieName = sessionCookieName(secure)

  // Web forms only: a JSON or text body is not a form of this page (415).
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 8192 },
    (_request, body, done) => done(null, parseForm(body as string)),
  )
  app.decorateRequest('accountUser', null)
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(pageSecurityHeaders)
  })

  app.setErrorHandler((error: Error, request, reply) => {
    const failure = toErrorBody(error)
    if (failure.status >= 500) {
      request.log.error({ err: error }, 'account page request failed')
    }
    const message =
      failure.status >= 500
        ? 'Something went wrong on our side. Try again in a moment.'
        : error instanceof AppError
          ? error.message
          : (frameworkMessages[failure.body.code] ?? frameworkMessages.INVALID_REQUEST ?? failure.body.error)
    reply.headers(failure.headers)
    return html(reply, failure.status, accountMessagePage('That did not work', message, backToAccount))
  })

  // Decides on the route the router matched, before the body is read: the origin of every form,
  // then the session, which every route needs unless its definition says otherwise.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.headers.origin !== origin) {
      request.log.warn({ origin: request.headers.origin }, 'account page form from another origin refused')
      return html(
        reply,
        403,
        accountMessagePage(
          'This form was refused',
          `It did not come from this cloud's own pages. Open ${origin}/account and try again from there.`,
          backToAccount,
        ),
      )
    }
    const session = await sessions.resume(readCookie(request.headers.cookie, cookieName))
    const account = session && (await directory.find(session.userId))
    request.accountUser = session && account ? { session, account: toPageAccount(account) } : null
    if (!request.accountUser && request.routeOptions.config.accountSession !== 'optional') {
      return reply.redirect('/account/sign-in', 303)
    }
    return undefined
  })

  const optional = { config: { public: true, accountSession: 'optional' } } as const
  // Public to the access-token guard: the session check above guards these.
  const signedIn = { config: { public: true } } as const

  function user(request: FastifyRequest): SignedIn {
    if (!request.accountUser) {
      throw new Error('an account page route ran without a session')
    }
    return request.accountUser
  }

  async function renderAccount(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: Pick<Parameters<typeof accountPage>[0], 'notice' | 'error' | 'values'> = {},
  ) {
    const { account, session } = user(request)
    const overview = await service.overview(account, session.id)
    return html(reply, status, accountPage({ overview, giftCommand: options.giftCommand, ...extra }))
  }

  /**
   * Runs a form's action for the signed-in person: success goes back to the page with a notice
   * (or wherever the action says), a refusal shows the page again with the reason in the section.
   */
  async function act(
    request: FastifyRequest,
    reply: FastifyReply,
    section: AccountSection,
    work: (signedIn: SignedIn, form: Form) => Promise<{ notice: keyof typeof notices } | { redirect: string }>,
    values?: (form: Form) => { name?: string; email?: string },
  ) {
    const form = formOf(request)
    try {
      const done = await work(user(request), form)
      return reply.redirect('notice' in done ? `/account?done=${done.notice}` : done.redirect, 303)
    } catch (err) {
      if (!(err instanceof AppError)) {
        throw err
      }
      reply.headers(err.headers)
      return renderAccount(request, reply, err.status, {
        error: { section, message: err.message },
        values: values?.(form),
      })
    }
  }

  app.get('/account/sign-in', optional, async (request, reply) => {
    if (request.accountUser) {
      return reply.redirect('/account', 303)
    }
    return html(reply, 200, accountSignInPage({ links: options.links }))
  })

  app.post('/account/sign-in', optional, async (request, reply) => {
    const form = formOf(request)
    const email = field(form, 'email')?.trim() ?? ''
    const password = field(form, 'password') ?? ''
    const again = (status: number, error: string) =>
      html(reply, status, accountSignInPage({ email: email.slice(0, maxLengths.email), error, links: options.links }))
    if (!email || !password) {
      return again(400, 'Enter your email and password.')
    }
    if (email.length > maxLengths.email || password.length > maxLengths.password) {
      return again(400, 'The email or password is too long. Check what you typed.')
    }
    let account: PageAccount
    try {
      account = await service.signIn(email, password, request.ip)
    } catch (err) {
      if (!(err instanceof AppError)) {
        throw err
      }
      request.log.info({ email, code: err.code }, 'account page sign-in refused')
      reply.headers(err.headers)
      return again(err.status, err.message)
    }
    // A browser that was signed in as someone else leaves that session behind.
    if (request.accountUser) {
      await sessions.end(request.accountUser.account.id, request.accountUser.session.id)
    }
    const { token } = await sessions.start(account.id)
    reply.header('set-cookie', sessionCookie(token, secure))
    return reply.redirect('/account', 303)
  })

  app.post('/account/sign-out', signedIn, async (request, reply) => {
    const { account, session } = user(request)
    await sessions.end(account.id, session.id)
    reply.header('set-cookie', clearedSessionCookie(secure))
    return reply.redirect('/account/sign-in', 303)
  })

  app.get<{ Querystring: { done?: unknown } }>('/account', signedIn, async (request, reply) => {
    const done = request.query.done
    const notice =
      typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done as keyof typeof notices] : undefined
    return renderAccount(request, reply, 200, { notice })
  })

  app.post('/account/name', signedIn, (request, reply) =>
    act(
      request,
      reply,
      'profile',
      async ({ account }, form) => {
        await service.changeName(account, required(form, 'name', 'Enter the name you want to be shown.'))
        return { notice: 'name' }
      },
      (form) => ({ name: field(form, 'name')?.slice(0, maxLengths.name) }),
    ),
  )

  app.post('/account/email', signedIn, (request, reply) =>
    act(
      request,
      reply,
      'email',
      async ({ account }, form) => {
        const email = required(form, 'email', 'Enter the new email address.')
        const password = required(form, 'password', 'Enter your current password to confirm the change.')
        await service.requestEmailChange(account, email, password, request.ip)
        return { notice: 'email' }
      },
      (form) => ({ email: field(form, 'email')?.slice(0, maxLengths.email) }),
    ),
  )

  app.post('/account/password', signedIn, (request, reply) =>
    act(request, reply, 'password', async ({ account, session }, form) => {
      const current = required(form, 'current', 'Enter your current password.')
      const next = required(form, 'password', 'Enter a new password.')
      const repeated = required(form, 'repeat', 'Enter the new password a second time.')
      await service.changePassword(
        account,
        { current, next, repeated },
        { address: request.ip, keepSessionId: session.id },
      )
      return { notice: 'password' }
    }),
  )

  app.post('/account/upgrade', signedIn, (request, reply) =>
    act(request, reply, 'license', async ({ account }) => ({
      redirect: await service.checkout(account, {
        success: `${origin}/account?done=upgraded`,
        cancel: `${origin}/account`,
      }),
    })),
  )

  app.post('/account/subscription', signedIn, (request, reply) =>
    act(request, reply, 'license', async ({ account }) => ({
      redirect: await service.portal(account, `${origin}/account`),
    })),
  )

  app.post<{ Params: { id: string } }>('/account/relay-sessions/:id/revoke', signedIn, (request, reply) =>
    act(request, reply, 'relays', async ({ account }) => {
      const { id } = request.params
      const notSignedIn = () => new AppError('NOT_FOUND', 'That relay is not signed in to your account any more.')
      if (!sessionIdPattern.test(id)) {
        throw notSignedIn()
      }
      await service.revokeRelaySession(account, id).catch((err: unknown) => {
        throw err instanceof AppError && err.code === 'NOT_FOUND' ? notSignedIn() : err
      })
      return { notice: 'relay' }
    }),
  )

  app.post<{ Params: { id: string } }>('/account/browser-sessions/:id/revoke', signedIn, (request, reply) =>
    act(request, reply, 'browsers', async ({ account, session }) => {
      const { id } = request.params
      if (id === session.id) {
        throw new AppError('CONFLICT', 'To sign out this browser, use the Sign out button at the top of the page.')
      }
      if (!sessionIdPattern.test(id)) {
        throw new AppError('NOT_FOUND', 'That sign-in no longer exists. It may have ended already.')
      }
      await service.endBrowserSession(account, id)
      return { notice: 'browser' }
    }),
  )

  app.get<{ Params: { id: string } }>('/account/backups/:id/download', signedIn, async (request, reply) => {
    try {
      return reply.redirect(await service.downloadUrl(user(request).account, request.params.id), 303)
    } catch (err) {
      if (!(err instanceof AppError)) {
        throw err
      }
      return renderAccount(request, reply, err.status, { error: { section: 'backups', message: err.message } })
    }
  })

  app.post('/account/delete', signedIn, async (request, reply) => {
    const form = formOf(request)
    const { account } = user(request)
    try {
      await service.deleteAccount(
        account,
        required(form, 'password', 'Enter your password to confirm that you want to delete your account.'),
        request.ip,
      )
    } catch (err) {
      if (!(err instanceof AppError)) {
        throw err
      }
      reply.headers(err.headers)
      return renderAccount(request, reply, err.status, { error: { section: 'delete', message: err.message } })
    }
    request.log.info({ userId: account.id }, 'account deleted from the account page')
    reply.header('set-cookie', clearedSessionCookie(secure))
    return html(reply, 200, accountDeletedPage())
  })
}

const backToAccount = { href: '/account', text: 'Back to your account' }

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(body)
}

/** A form's fields, each with every value sent for it; a field sent twice is not read as either. */
function parseForm(body: string): Form {
  const form: Form = Object.create(null)
  for (const [name, value] of new URLSearchParams(body)) {
    form[name] = [...(form[name] ?? []), value]
  }
  return form
}

function formOf(request: FastifyRequest): Form {
  const body = request.body
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Form) : Object.create(null)
}

function field(form: Form, name: string): string | undefined {
  const values = form[name]
  return values?.length === 1 ? values[0] : undefined
}

/** A field the form must carry once, within its length; refusals read as what to do. */
function required(form: Form, name: keyof typeof maxLengths | 'current' | 'repeat', missing: string): string {
  const value = field(form, name)
  if (value === undefined || value === '') {
    throw new AppError('INVALID_REQUEST', missing)
  }
  const max = name === 'current' || name === 'repeat' ? maxLengths.password : maxLengths[name]
  if (value.length > max) {
    throw new AppError('INVALID_REQUEST', `That is too long: at most ${max} characters. Check what you typed.`)
  }
  return value
}
